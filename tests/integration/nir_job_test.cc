// NIR models on a running cluster: for each of the three real exports, snnctl estimate prints
// its figures from the file, and a job naming it gets the cores the model needs and completes
// on the simulated board, which built the network from the copy that travelled in the job.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "snn_paths.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

TEST(NirJobTest, EachRealExportIsEstimatedAndRunsOnTheSimulatedBoard) {
  TestCluster cluster;
  cluster.StartMaster();
  // The agent measures the simulated board on this host: on a busy one it carries less than
  // its nominal 100,000 ksps (70,000 was seen under ctest -j2), and the jobs ask far less.
  cluster.StartAgent("node1",
                     "boards:\n  - {type: sim-v1, mesh: 8x8, neurons_per_core: 256, "
                     "ksps: 100000, streams: 4}\n");
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  const struct {
    const char* file;
    const char* step_ms;  // the step each was exported at
    uint32_t cores;
    const char* synapses;
  } cases[] = {
      {"lif_rockpool.nir", "1", 2, "synapses:         1 "},
      {"braille_noDelay_bias_zero.nir", "0.1", 3, "synapses:         2166 "},
      {"cnn_sinabs.nir", "1", 46, "synapses:         1122848 "},
  };
  uint64_t id = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string model = std::string(SNN_SOURCE_DIR) + "/etc/models/nir/" + c.file;
    auto estimate = cluster.RunSnnctl(
        {"--master", cluster.master_address(), "estimate", model, "--dt", c.step_ms});
    ASSERT_EQ(estimate.exit_code, 0) << estimate.err;
    EXPECT_NE(estimate.out.find("logical cores:    " + std::to_string(c.cores) +
                                " (the smallest board type, 256"),
              std::string::npos)
        << estimate.out;
    EXPECT_NE(estimate.out.find(c.synapses), std::string::npos) << estimate.out;
    // The example app reads the network the agent wrote for it, drives its inputs through the
    // spike gateway and counts what its output layer gives.
    const std::string job = cluster.dir() + "/" + c.file + ".yaml";
    std::ofstream(job) << "name: nir\ntask:\n  command: " SNN_EXAMPLE_NIR_BIN
                          "\n  args: [--steps, '50']\n  resources:\n    model: "
                       << model << "\n    model_step_ms: " << c.step_ms << "\n    ksps: 2000\n";
    auto submit = cluster.Snnctl({"submit", job});
    ASSERT_EQ(submit.exit_code, 0) << submit.err;
    ++id;
    ASSERT_TRUE(cluster.WaitForState(id, v1::COMPLETED))
        << cluster.Snnctl({"show", std::to_string(id)}).out;
    auto shown = cluster.Show(id);
    ASSERT_TRUE(shown.ok());
    EXPECT_EQ(shown->spec().task().resources().cores(), c.cores);
    const std::string out = ReadFile(shown->tasks(0).stdout_path());
    EXPECT_NE(out.find("most active output neuron: "), std::string::npos) << out;
    if (std::string(c.file) == "lif_rockpool.nir") {
      // Each input spike lifts the LIF neuron past its threshold in its step (and what is left
      // after subtracting the threshold may cross it again): at least as many outputs.
      uint64_t injected = 0, outputs = 0;
      ASSERT_EQ(std::sscanf(out.substr(out.find("usage: ")).c_str(),
                            "usage: injected %lu, delivered %*u, outputs %lu", &injected, &outputs),
                2)
          << out;
      EXPECT_GT(injected, 0u);
      EXPECT_GE(outputs, injected) << out;
    }
  }
}

TEST(NirJobTest, AModelWhoseOutputGivesValuesIsRefusedAtSubmit) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  const std::string model = cluster.dir() + "/li.json";
  std::ofstream(model) << R"({"name": "li", "dynamics": "nir", "populations": [
      {"name": "in", "size": 1, "role": "input", "nir": {"kind": "Input"}},
      {"name": "li", "size": 1, "role": "output", "nir": {"kind": "LI", "tau": [0.002]}}],
    "projections": [{"from": "in", "to": "li", "connectivity": "stages", "stages": [
      {"kind": "dense", "in_shape": [1], "out_shape": [1], "weights": [1]}]}]})";
  const std::string job = cluster.dir() + "/li.yaml";
  std::ofstream(job) << "task:\n  command: /bin/true\n  resources:\n    model: " << model
                     << "\n    ksps: 10\n";
  auto submit = cluster.Snnctl({"submit", job});
  EXPECT_NE(submit.exit_code, 0);
  EXPECT_NE(submit.err.find("output layer 'li' (LI) gives values, not spikes, and the board "
                            "returns spikes only; snnctl simulate writes its values"),
            std::string::npos)
      << submit.err;
  EXPECT_EQ(cluster.ListAll()->jobs_size(), 0);
}

TEST(NirJobTest, ABrokenNirFileIsRefusedBeforeSubmittingWithOneLine) {
  TestCluster cluster;
  cluster.StartMaster();
  const std::string bad = cluster.dir() + "/bad.nir";
  std::ofstream(bad) << "not hdf5\n";
  const std::string job = cluster.dir() + "/bad.yaml";
  std::ofstream(job) << "task:\n  command: /bin/true\n  resources:\n    model: " << bad
                     << "\n    ksps: 10\n";
  auto submit = cluster.Snnctl({"submit", job});
  EXPECT_NE(submit.exit_code, 0);
  EXPECT_EQ(submit.err, "snnctl: " + bad +
                            ": not a NIR file (NIR files are HDF5; this one is not, or is cut "
                            "short)\n");
  auto jobs = cluster.Snnctl({"jobs", "-o", "json"});
  EXPECT_EQ(jobs.out.find("\"id\""), std::string::npos) << jobs.out;  // nothing was submitted
}

// snnctl estimate needs no cluster (the guide says so; it refused without one): only the cores
// are left out, saying why. A NIR file whose layers give no v_reset gets a note saying which
// reset snn assumed; --reset chooses one (and the note goes).
TEST(NirJobTest, EstimateNeedsNoClusterAndSaysWhichResetItAssumed) {
  TestCluster cluster;  // no master started: nothing answers at 127.0.0.1:1
  const std::string model =
      std::string(SNN_SOURCE_DIR) + "/etc/models/nir/braille_noDelay_bias_zero.nir";
  auto alone = cluster.RunSnnctl(
      {"--master", "127.0.0.1:1", "--timeout", "5", "estimate", model, "--dt", "0.1"});
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_NE(alone.out.find("logical cores:    unknown: no cluster reached"), std::string::npos)
      << alone.out;
  EXPECT_NE(alone.out.find("synapses:         2166 "), std::string::npos) << alone.out;
  EXPECT_NE(alone.out.find("spike rate:"), std::string::npos) << alone.out;
  EXPECT_NE(alone.err.find("gives no v_reset for layers"), std::string::npos) << alone.err;
  EXPECT_NE(alone.err.find("--reset zero"), std::string::npos) << alone.err;

  auto sized = cluster.RunSnnctl({"--master", "127.0.0.1:1", "estimate", model, "--dt", "0.1",
                                  "--neurons-per-core", "256", "--reset", "subtract"});
  ASSERT_EQ(sized.exit_code, 0) << sized.err;
  EXPECT_NE(sized.out.find("logical cores:    3 (256 neurons per core)"), std::string::npos)
      << sized.out;
  EXPECT_EQ(sized.err.find("v_reset"), std::string::npos) << sized.err;  // chosen: no note

  auto zero = cluster.RunSnnctl({"--master", "127.0.0.1:1", "estimate", model, "--dt", "0.1",
                                 "--neurons-per-core", "256", "--reset", "zero"});
  ASSERT_EQ(zero.exit_code, 0) << zero.err;
  EXPECT_EQ(zero.err.find("v_reset"), std::string::npos) << zero.err;

  auto bad = cluster.RunSnnctl({"--master", "127.0.0.1:1", "estimate", model, "--dt", "0.1",
                                "--neurons-per-core", "256", "--reset", "halfway"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(bad.err,
            "snnctl: the reset of layers without v_reset is subtract or zero, not 'halfway'\n");
}

}  // namespace
}  // namespace snn::testing
