// The simulated board's LIF networks: a chain whose weights make every spike propagate gives
// output spikes at the expected neurons and steps; saturation delays and drops, and counts both.
#include "nodeagent/hal/lif_network.h"

#include <gtest/gtest.h>

#include "common/model/model.h"
#include "nodeagent/hal/sim_board.h"

namespace snn {
namespace {

// in -> relay -> out, one to one, each weight above threshold: a spike injected into in[i] at
// step s reaches out[i] two steps later.
v1::Model Chain(uint32_t size, uint32_t delay = 1) {
  auto model = ParseModelJson(R"({"name": "chain", "timestep_ms": 1,
    "populations": [
      {"name": "in", "size": )" +
                              std::to_string(size) + R"(, "role": "input"},
      {"name": "relay", "size": )" +
                              std::to_string(size) + R"(},
      {"name": "out", "size": )" +
                              std::to_string(size) + R"(, "role": "output"}],
    "projections": [
      {"from": "in", "to": "relay", "connectivity": "one_to_one", "weight": 1.5,
       "delay_steps": )" + std::to_string(delay) +
                              R"(},
      {"from": "relay", "to": "out", "connectivity": "one_to_one", "weight": 1.5}]})");
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return *model;
}

SimNetworkLimits Limits(uint32_t cores, uint32_t npc) {
  SimNetworkLimits l;
  l.num_cores = cores;
  l.neurons_per_core = npc;
  return l;
}

std::vector<wire::Spike> Drain(LifNetwork& net) {
  std::vector<wire::Spike> out(1024);
  out.resize(net.ReadOutput(out.data(), out.size()));
  return out;
}

TEST(LifNetworkTest, ChainDeliversEachSpikeToItsOutputNeuronTwoStepsLater) {
  auto net = LifNetwork::Build(Chain(8), Limits(3, 8));
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  // Populations lie on cores of their own: in on core 0, relay on 1, out on 2.
  EXPECT_EQ((*net)->AddressOf("out", 5)->core, 2);
  EXPECT_EQ((*net)->AddressOf("out", 5)->neuron, 5);
  std::vector<wire::Spike> in;
  for (uint16_t i = 0; i < 8; ++i) in.push_back({0, i, uint32_t{2} * i});
  (*net)->Inject(in.data(), in.size());
  (*net)->Step(20);
  const auto out = Drain(**net);
  ASSERT_EQ(out.size(), 8u);
  for (uint16_t i = 0; i < 8; ++i) {
    EXPECT_EQ(out[i].core, 2);
    EXPECT_EQ(out[i].neuron, i);
    EXPECT_EQ(out[i].step, 2u * i + 2) << "neuron " << i;
  }
  EXPECT_EQ((*net)->counters().delivered, 24u);  // 8 in, 8 relay, 8 out
  EXPECT_EQ((*net)->counters().outputs, 8u);
  EXPECT_EQ((*net)->counters().delayed, 0u);
}

TEST(LifNetworkTest, DelayStepsAndSubThresholdInput) {
  auto net = LifNetwork::Build(Chain(4, /*delay=*/3), Limits(3, 4));
  ASSERT_TRUE(net.ok());
  wire::Spike s{0, 1, 0};
  (*net)->Inject(&s, 1);
  (*net)->Step(10);
  const auto out = Drain(**net);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].neuron, 1);
  EXPECT_EQ(out[0].step, 4u);  // 3 steps to relay, 1 more to out

  auto weak = ParseModelJson(R"({"name": "weak", "populations": [
      {"name": "in", "size": 1, "role": "input"}, {"name": "out", "size": 1, "role": "output"}],
    "projections": [{"from": "in", "to": "out", "connectivity": "all_to_all", "weight": 0.6}]})");
  ASSERT_TRUE(weak.ok());
  auto two = LifNetwork::Build(*weak, Limits(2, 16));
  ASSERT_TRUE(two.ok());
  wire::Spike one{0, 0, 0};
  (*two)->Inject(&one, 1);
  (*two)->Step(50);
  EXPECT_TRUE(Drain(**two).empty()) << "0.6 is below the threshold of 1";
  wire::Spike again[2] = {{0, 0, 50}, {0, 0, 51}};  // two close inputs sum past it
  (*two)->Inject(again, 2);
  (*two)->Step(5);
  const auto out2 = Drain(**two);
  ASSERT_EQ(out2.size(), 1u);
  EXPECT_EQ(out2[0].step, 52u);
}

TEST(LifNetworkTest, SaturationDelaysThenDropsAndCountsBoth) {
  SimNetworkLimits limits = Limits(3, 64);
  limits.spikes_per_step = 10;
  limits.backlog_limit = 30;
  auto net = LifNetwork::Build(Chain(64), limits);
  ASSERT_TRUE(net.ok());
  std::vector<wire::Spike> in;
  for (uint16_t i = 0; i < 64; ++i) in.push_back({0, i, 0});
  (*net)->Inject(in.data(), in.size());
  (*net)->Step(40);
  const auto c = (*net)->counters();
  // 64 fire at step 0; 30 fit the backlog, 34 drop; the 30 leave 10 a step.
  EXPECT_EQ(c.dropped, 34u);
  EXPECT_GT(c.delayed, 0u);
  const auto out = Drain(**net);
  EXPECT_EQ(out.size(), 30u);
  EXPECT_EQ(c.delivered, 90u);  // 30 inputs, 30 relays, 30 outputs: nothing lost silently
}

TEST(LifNetworkTest, AddressesOutsideTheNetworkAreNotAddressable) {
  auto net = LifNetwork::Build(Chain(10), Limits(6, 8));  // 10 neurons: 2 cores a population
  ASSERT_TRUE(net.ok());
  EXPECT_TRUE((*net)->Addressable(0, 7));
  EXPECT_TRUE((*net)->Addressable(1, 1));
  EXPECT_FALSE((*net)->Addressable(1, 2)) << "core 1 holds in[8..9] only";
  EXPECT_FALSE((*net)->Addressable(6, 0)) << "beyond the task's cores";
  EXPECT_FALSE((*net)->Addressable(5, 2));
}

TEST(LifNetworkTest, RefusesAModelTooBigForTheTask) {
  auto net = LifNetwork::Build(Chain(100), Limits(2, 64));
  ASSERT_FALSE(net.ok());
  EXPECT_NE(net.status().message().find("needs 6 cores"), std::string::npos)
      << net.status().message();
  SimNetworkLimits small = Limits(64, 1024);
  small.max_synapses = 1000;
  auto dense = ParseModelJson(R"({"name": "dense", "populations": [
      {"name": "a", "size": 100, "role": "input"}, {"name": "b", "size": 100, "role": "output"}],
    "projections": [{"from": "a", "to": "b", "connectivity": "all_to_all", "weight": 1}]})");
  ASSERT_TRUE(dense.ok());
  auto too_many = LifNetwork::Build(*dense, small);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("synapses"), std::string::npos);
}

// The model that once aborted the agent (std::bad_alloc): a long delay over many neurons is
// refused by its memory estimate, before anything is allocated.
TEST(LifNetworkTest, RefusesANetworkWhoseDelayRingWouldNotFit) {
  auto net = LifNetwork::Build(Chain(100000, 65536), Limits(400, 1000));
  ASSERT_FALSE(net.ok());
  EXPECT_NE(net.status().message().find("steps of delay"), std::string::npos)
      << net.status().message();
  EXPECT_TRUE(LifNetwork::Build(Chain(1000, 64), Limits(4, 1000)).ok());
}

// The simulator's memory is bounded per board, not per network: a task gets its cores' share of
// the board's budget, so many small tasks cannot together make the agent hold more than that
// (issue 34: networks grew the agent by 1-2 GiB outside every task's cgroup).
TEST(SimBoardTest, ANetworkHoldsAtMostItsCoresShareOfTheBoardsMemory) {
  v1::BoardInfo info;
  info.set_type("sim-v1");
  info.set_width(8);
  info.set_height(8);
  info.set_neurons_per_core(1000);
  info.set_ksps(1000);
  info.set_streams(4);
  SimBoard board(info, uint64_t{32} << 20);  // half a MiB per core
  const v1::Model model = Chain(2000, 256);  // about 6 MiB, on 6 cores at least
  auto small = board.LoadNetwork(&model, 6);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("the simulator holds at most 3 MiB (this task's share, "
                                          "6 of the board's 64 cores, of its 32 MiB (snn-agent "
                                          "--sim_board_memory_mb))"),
            std::string::npos)
      << small.status().message();
  EXPECT_TRUE(board.LoadNetwork(&model, 16).ok()) << "16 cores' share, 8 MiB, holds it";
}

}  // namespace
}  // namespace snn
