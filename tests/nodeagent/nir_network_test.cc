// The NIR engine on hand-made models, each rule of docs/nir.md worked out by hand: same-step
// propagation and loops a step later, CubaLIF's order of updates, the two resets, biases,
// Threshold on values, values passed on by LI, the board's capacity counted, and the refusals
// (an output giving values on the board, a same-step edge back to an earlier layer, parameters
// of the wrong count).
#include "nodeagent/hal/nir_network.h"

#include <gtest/gtest.h>

#include "common/model/model.h"

namespace snn {
namespace {

SimNetworkLimits Limits() {
  SimNetworkLimits l;
  l.num_cores = 8;
  l.neurons_per_core = 16;
  return l;
}

// A model with dynamics nir from JSON (as a hand-made or imported one travels).
v1::Model Nir(const std::string& populations, const std::string& projections) {
  auto model = ParseModelJson(R"({"name": "t", "timestep_ms": 1, "dynamics": "nir",
    "populations": [)" + populations +
                              R"(], "projections": [)" + projections + "]}");
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? *model : v1::Model();
}

std::string Edge(const std::string& from, const std::string& to, float w, uint32_t delay = 0,
                 uint32_t size = 1) {
  std::string weights;
  for (uint32_t i = 0; i < size * size; ++i) {
    weights += (i ? ", " : "") + std::to_string(i % (size + 1) == 0 ? w : 0.0f);
  }
  return R"({"from": ")" + from + R"(", "to": ")" + to +
         R"(", "connectivity": "stages", "delay_steps": )" + std::to_string(delay) +
         R"(, "stages": [{"kind": "dense", "in_shape": [)" + std::to_string(size) +
         R"(], "out_shape": [)" + std::to_string(size) + R"(], "weights": [)" + weights + "]}]}";
}

const char kInput[] = R"({"name": "in", "size": 1, "role": "input", "nir": {"kind": "Input"}})";

// Runs `steps` steps with the input spiking at `inputs`; returns the output spikes' steps.
std::vector<uint32_t> OutputSteps(NirNetwork& net, std::vector<uint32_t> inputs, uint32_t steps) {
  std::vector<wire::Spike> in;
  auto address = net.AddressOf("in", 0);
  for (uint32_t s : inputs) in.push_back(wire::Spike{address->core, address->neuron, s});
  net.Inject(in.data(), in.size());
  net.Step(steps);
  std::vector<wire::Spike> out(64);
  out.resize(net.ReadOutput(out.data(), out.size()));
  std::vector<uint32_t> at;
  for (const auto& s : out) at.push_back(s.step);
  return at;
}

TEST(NirNetworkTest, ASpikeCrossesEveryLayerInItsStepAndALoopTakesOne) {
  // in -> a -> b (IF, r 1, threshold 0.5, weights 1): an input at step 3 makes b fire at 3.
  // b -> a with delay 1 (a loop) and weight 1 makes a fire again at 4, and b with it.
  const std::string if_layer = R"("nir": {"kind": "IF", "v_threshold": [0.5]})";
  auto model = Nir(std::string(kInput) + R"(, {"name": "a", "size": 1, )" + if_layer +
                       R"(}, {"name": "b", "size": 1, "role": "output", )" + if_layer + "}",
                   Edge("in", "a", 1) + ", " + Edge("a", "b", 1));
  auto net = NirNetwork::Build(model, Limits());
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  EXPECT_EQ(OutputSteps(**net, {3}, 10), (std::vector<uint32_t>{3}));

  auto loop = Nir(std::string(kInput) + R"(, {"name": "a", "size": 1, )" + if_layer +
                      R"(}, {"name": "b", "size": 1, "role": "output", )" + if_layer + "}",
                  Edge("in", "a", 1) + ", " + Edge("a", "b", 1) + ", " + Edge("b", "a", 0.6, 1));
  auto looped = NirNetwork::Build(loop, Limits());
  ASSERT_TRUE(looped.ok()) << looped.status().ToString();
  // v(a) after its spike at 3: 1 - 0.5 = 0.5; at 4 it gets 0.6 from b: 1.1 > 0.5, fires, and so
  // on: the loop keeps it going a step at a time.
  EXPECT_EQ(OutputSteps(**looped, {3}, 6), (std::vector<uint32_t>{3, 4, 5}));
}

TEST(NirNetworkTest, CubaLifUpdatesTheMembraneFromTheCurrentItHadBeforeTheStep) {
  // dt 1 ms, tau_syn 1 ms, tau_mem 1 ms, r 1, w_in 1: I' = x, v' = I (the old one). An input at
  // step 2 sets I = 2 (weight 2) at step 2, v = 2 at step 3: the spike is at 3, not 2.
  auto model = Nir(std::string(kInput) +
                       R"(, {"name": "c", "size": 1, "role": "output", "nir": {"kind": "CubaLIF",
        "tau": [0.001], "tau_syn": [0.001], "v_threshold": [1]}})",
                   Edge("in", "c", 2));
  auto net = NirNetwork::Build(model, Limits());
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  EXPECT_EQ(OutputSteps(**net, {2}, 6), (std::vector<uint32_t>{3}));
}

TEST(NirNetworkTest, ResetToVResetOrByTheThresholdAndABiasDrivesEveryStep) {
  // IF with a bias of 0.375 (exact in binary), threshold 1: v 0.375, 0.75, 1.125 (a spike at
  // 2). Subtracting the threshold leaves 0.125: 0.5, 0.875, 1.25 (5), then 0.25, 0.625, 1.0
  // (not above), 1.375 (8), then 0.375, 0.75, 1.125 (10). Resetting to 0 instead: 0.375, 0.75,
  // 1.125 (5), again at 8.
  for (const char* reset : {"", R"(, "v_reset": [0])"}) {
    SCOPED_TRACE(reset);
    auto model = Nir(std::string(kInput) +
                         R"(, {"name": "b", "size": 1, "role": "output", "nir": {"kind": "IF",
          "v_threshold": [1], "bias": [0.375])" +
                         reset + "}}",
                     Edge("in", "b", 0));
    auto net = NirNetwork::Build(model, Limits());
    ASSERT_TRUE(net.ok()) << net.status().ToString();
    std::vector<uint32_t> expected = std::string(reset).empty() ? std::vector<uint32_t>{2, 5, 8, 10}
                                                                : std::vector<uint32_t>{2, 5, 8};
    EXPECT_EQ(OutputSteps(**net, {}, 11), expected);
  }
}

TEST(NirNetworkTest, ALeakyIntegratorPassesItsValueOnAndAThresholdSpikesOnIt) {
  // in -> li (tau 2 ms, r 2: v += 0.5 (2 x - v)) -> thr (threshold 0.6): an input of 1 at step
  // 1 gives v = 1 (no spike: LI gives values); at 2, v = 0.5 and 0.5 x 1 reaches thr: no spike;
  // with weight 1.5 into thr: 1.5 at 1 and 0.75 at 2 spike, 0.375 at 3 does not.
  auto model = Nir(std::string(kInput) +
                       R"(, {"name": "li", "size": 1, "nir": {"kind": "LI", "tau": [0.002],
        "r": [2]}}, {"name": "thr", "size": 1, "role": "output",
        "nir": {"kind": "Threshold", "v_threshold": [0.6]}})",
                   Edge("in", "li", 1) + ", " + Edge("li", "thr", 1.5));
  auto net = NirNetwork::Build(model, Limits());
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  EXPECT_EQ(OutputSteps(**net, {1}, 6), (std::vector<uint32_t>{1, 2}));
}

TEST(NirNetworkTest, BeyondTheBoardsCapacitySpikesAreDelayedAndCounted) {
  const std::string if_layer = R"("nir": {"kind": "IF", "v_threshold": [0.5]})";
  auto model =
      Nir(std::string(kInput) + R"(, {"name": "b", "size": 1, "role": "output", )" + if_layer + "}",
          Edge("in", "b", 1));
  SimNetworkLimits limits = Limits();
  limits.spikes_per_step = 1;  // the input's spike uses the step: b's waits a step
  auto net = NirNetwork::Build(model, limits);
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  EXPECT_EQ(OutputSteps(**net, {0}, 4), (std::vector<uint32_t>{1}));
  EXPECT_EQ((*net)->counters().delayed, 1u);
}

TEST(NirNetworkTest, WhatCannotRunExactlyIsRefusedWithOneLine) {
  auto li_out = Nir(std::string(kInput) + R"(, {"name": "li", "size": 1, "role": "output",
      "nir": {"kind": "LI", "tau": [0.002]}})",
                    Edge("in", "li", 1));
  auto on_board = NirNetwork::Build(li_out, Limits());
  ASSERT_FALSE(on_board.ok());
  EXPECT_NE(on_board.status().message().find("output layer 'li' (LI) gives values, not spikes"),
            std::string::npos)
      << on_board.status().message();
  EXPECT_TRUE(NirNetwork::Build(li_out, Limits(), /*graded_outputs=*/true).ok());

  const std::string if_layer = R"("nir": {"kind": "IF", "v_threshold": [0.5]})";
  auto back = ParseModelJson(
      R"({"name": "t", "dynamics": "nir", "populations": [)" + std::string(kInput) +
      R"(, {"name": "b", "size": 1, "role": "output", )" + if_layer + R"(}], "projections": [)" +
      Edge("in", "b", 1) + ", " + Edge("b", "in", 1) + "]}");
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("projection b -> in takes effect in the same step but "
                                         "leads back to an earlier layer"),
            std::string::npos)
      << back.status().message();

  auto counts = ParseModelJson(R"({"name": "t", "dynamics": "nir", "populations": [)" +
                               std::string(kInput) + R"(, {"name": "b", "size": 3, "role": "output",
      "nir": {"kind": "IF", "v_threshold": [1, 2]}}], "projections": []})");
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.status().message().find("v_threshold has 2 values; give 1 or 3"),
            std::string::npos)
      << counts.status().message();
}

}  // namespace
}  // namespace snn
