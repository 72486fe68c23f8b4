#include "common/model/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "common/model/model_addresses.h"
#include "snn_paths.h"

namespace snn {
namespace {

constexpr char kChain[] = R"({
  "populations": [
    {"name": "in", "size": 10, "role": "input"},
    {"name": "mid", "size": 10},
    {"name": "out", "size": 10, "role": "output"}
  ],
  "projections": [
    {"from": "in", "to": "mid", "connectivity": "one_to_one", "weight": 4.0},
    {"from": "mid", "to": "out", "connectivity": "one_to_one", "weight": 4.0}
  ]
})";

TEST(ModelTest, ParsesAndFillsDefaults) {
  auto model = ParseModelJson(kChain);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->populations(1).neuron().tau_m_ms(), 20);
  EXPECT_EQ(model->populations(1).neuron().v_threshold(), 1);
  EXPECT_EQ(model->timestep_ms(), 1);
}

TEST(ModelTest, EstimatesCoresShapeAndRate) {
  auto model = ParseModelJson(kChain);
  ASSERT_TRUE(model.ok());
  ModelEstimate e = EstimateModel(*model, /*neurons_per_core=*/4, /*input_rate_hz=*/100);
  EXPECT_EQ(e.neurons, 30u);
  EXPECT_EQ(e.cores, 9u);  // ceil(10/4) per population
  EXPECT_EQ(e.shape_width * e.shape_height, 9u);
  // mid: drive 100 Hz x 4 = 400/s, tau 20 ms -> v_ss = 8; time to threshold 20 ms x ln(8/7).
  const double mid = 1.0 / (0.020 * std::log(8.0 / 7.0) + 0.002);
  const double out_vss = mid * 4 * 0.020;
  const double out = 1.0 / (0.020 * std::log(out_vss / (out_vss - 1)) + 0.002);
  EXPECT_NEAR(e.spikes_per_s, 10 * 100 + 10 * mid + 10 * out, 1e-6);
  // No input, no spikes; a weak projection stays below threshold.
  EXPECT_EQ(EstimateModel(*model, 4, 0).spikes_per_s, 0);
}

TEST(ModelTest, NamesEveryKindOfMistake) {
  struct Case {
    const char* json;
    const char* expect;
  } cases[] = {
      {"{", "not valid"},
      {R"({"populations": [], "colour": 1})", "not valid"},  // unknown field
      {R"({"populations": []})", "no populations"},
      {R"({"populations": [{"name": "a", "size": 0, "role": "input"}]})", "size 0"},
      {R"({"populations": [{"name": "a", "size": -5, "role": "input"}]})", "size -5"},
      {R"({"populations": [{"name": "a", "size": 1, "role": "input"}, {"name": "a", "size": 1}]})",
       "appears twice"},
      {R"({"populations": [{"name": "a", "size": 1, "role": "sideways"}]})", "role 'sideways'"},
      {R"({"populations": [{"name": "a", "size": 1, "role": "input"}]})", "role 'output'"},
      {R"({"populations": [{"name": "a", "size": 1, "role": "input"}, {"name": "b", "size": 1, "role": "output"}],
          "projections": [{"from": "a", "to": "c"}]})",
       "unknown population 'c'"},
      {R"({"populations": [{"name": "a", "size": 2, "role": "input"}, {"name": "b", "size": 3, "role": "output"}],
          "projections": [{"from": "a", "to": "b", "weights": [1, 2, 3]}]})",
       "weights has 3 values; all_to_all needs 2 x 3 = 6"},
      {R"({"populations": [{"name": "a", "size": 2, "role": "input"}, {"name": "b", "size": 3, "role": "output"}],
          "projections": [{"from": "a", "to": "b", "connectivity": "one_to_one"}]})",
       "equal size"},
      {R"({"populations": [{"name": "a", "size": 2, "role": "input"}, {"name": "b", "size": 3, "role": "output"}],
          "projections": [{"from": "a", "to": "b", "connectivity": "random", "probability": 1.5}]})",
       "probability"},
      {R"({"populations": [{"name": "a", "size": 1, "role": "input", "neuron": {"tau_m_ms": 0}}, {"name": "b", "size": 1, "role": "output"}]})",
       "tau_m_ms"},
      // Bounds that keep a model from costing the agent unbounded memory or wrapping a cast.
      {R"({"populations": [{"name": "a", "size": 1, "role": "input"}, {"name": "b", "size": 1, "role": "output"}],
          "projections": [{"from": "a", "to": "b", "delay_steps": 4000000000}]})",
       "delay_steps is 4000000000; at most 65536"},
      {R"({"timestep_ms": 1e300, "populations": [{"name": "a", "size": 1, "role": "input"}]})",
       "timestep_ms must be between 0.001 (1 us) and 1000"},
      // A step far below any board's makes a simulated second take forever.
      {R"({"timestep_ms": 1e-300, "populations": [{"name": "a", "size": 1, "role": "input"}]})",
       "timestep_ms must be between 0.001 (1 us) and 1000"},
      {R"({"populations": [{"name": "a", "size": 1, "role": "input", "neuron": {"refractory_ms": 1e300}}, {"name": "b", "size": 1, "role": "output"}]})",
       "refractory_ms must be between 0 and 1000000"},
  };
  for (const auto& c : cases) {
    auto model = ParseModelJson(c.json);
    ASSERT_FALSE(model.ok()) << c.json;
    EXPECT_NE(model.status().message().find(c.expect), std::string::npos)
        << c.json << "\n  -> " << model.status().message();
  }
}

TEST(ModelTest, TheExampleModelLoads) {
  auto model = LoadModelFile(std::string(SNN_SOURCE_DIR) + "/etc/models/chain.json");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_GT(EstimateModel(*model, 256, 10).spikes_per_s, 0);
  EXPECT_FALSE(LoadModelFile("/no/such/model.json").ok());
}

// A model's core count is counted in 64 bits: 50 populations of 10^8 neurons at one neuron a
// core need 5 * 10^9 cores, which a 32-bit count wrapped to a small number that fit a board.
TEST(ModelEstimateTest, TheCoreCountDoesNotWrap) {
  std::string json = R"({"populations": [)";
  for (int i = 0; i < 50; ++i) {
    json += std::string(i ? "," : "") + R"({"name": "p)" + std::to_string(i) +
            R"(", "size": 100000000, "role": ")" +
            (i == 0    ? "input"
             : i == 49 ? "output"
                       : "hidden") +
            R"("})";
  }
  json += "]}";
  auto model = ParseModelJson(json);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const ModelEstimate e = EstimateModel(*model, 1, 10);
  EXPECT_EQ(e.cores, 5'000'000'000u);
  EXPECT_EQ(e.shape_width, 0u) << "no mesh holds it: no shape";
}

// A file that is not JSON (or not a model's JSON) is one printable line, whatever the parser
// quotes of it: never the file's bytes across several lines.
TEST(ModelTest, ParseErrorsAreOnePrintableLine) {
  for (const std::string& bad :
       {std::string("{\"populations\": [\n  {\"name\": \"a\",\n   oops\n}"),
        std::string("{\"populations\": \"\x1b[2J\n\n\n\"}"), std::string("\n\n{{{{\n"),
        std::string("{\"timestep_ms\": \"fast\",\n\"populations\": []}")}) {
    auto model = ParseModelJson(bad);
    ASSERT_FALSE(model.ok());
    const std::string& m = model.status().message();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.find('\x1b'), std::string::npos) << m;
    EXPECT_LE(m.size(), 260u) << m;
  }
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

// Experiments name neurons by population; the simulated board lays populations on cores in
// model order, each on cores of its own. A model of a billion neurons costs nothing to address.
TEST(ModelAddressesTest, AddressesRoundTripAndCostNothingPerNeuron) {
  v1::Model model;
  for (const auto& [name, size] :
       std::vector<std::pair<std::string, int64_t>>{{"in", 5}, {"hidden", 300}, {"out", 2}}) {
    v1::Population* p = model.add_populations();
    p->set_name(name);
    p->set_size(size);
  }
  const ModelAddresses addresses(model, 256);
  auto out1 = addresses.Of("out", 1);
  ASSERT_TRUE(out1.ok());
  EXPECT_EQ(out1->core, 3);  // in: core 0; hidden: cores 1-2; out: core 3
  EXPECT_EQ(out1->neuron, 1);
  auto hidden299 = addresses.Of("hidden", 299);
  ASSERT_TRUE(hidden299.ok());
  EXPECT_EQ(hidden299->core, 2);
  EXPECT_EQ(hidden299->neuron, 43);
  std::string population;
  uint32_t index = 0;
  ASSERT_TRUE(addresses.NameOf(2, 43, &population, &index));
  EXPECT_EQ(population, "hidden");
  EXPECT_EQ(index, 299u);
  EXPECT_FALSE(addresses.NameOf(2, 44, &population, &index));  // past hidden's last neuron
  EXPECT_FALSE(addresses.NameOf(4, 0, &population, &index));   // no core 4
  EXPECT_EQ(addresses.Of("out", 2).status().message(),
            "population 'out' has 2 neurons: there is no neuron 2");
  EXPECT_EQ(addresses.Of("inp", 0).status().message(),
            "the model has no population 'inp' (it has in (5), hidden (300), out (2))");

  v1::Model huge;
  for (int i = 0; i < 10; ++i) {
    v1::Population* p = huge.add_populations();
    p->set_name("p" + std::to_string(i));
    p->set_size(100'000'000);
  }
  const ModelAddresses one_per_core(huge, 1);  // ten populations, nothing per neuron
  EXPECT_TRUE(one_per_core.Of("p0", 65'535).ok());
  EXPECT_FALSE(one_per_core.Of("p0", 65'536).ok());  // beyond the cores a task addresses
  EXPECT_TRUE(one_per_core.NameOf(65'535, 0, &population, &index));
  EXPECT_EQ(index, 65'535u);
}

}  // namespace
}  // namespace snn
