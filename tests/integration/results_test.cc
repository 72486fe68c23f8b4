// A job's inputs and results with real daemons: files given in the job file are in the task's
// working directory when it starts; what it leaves in $SNN_OUTPUT_DIR is listed and fetched by
// `snnctl results` (paged past 1 MiB, subdirectories kept) with the provenance the master
// recorded; a link the task plants there is never followed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "snn_paths.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

constexpr char kJob[] = R"(name: results
time_limit: 5m
task:
  command: /bin/sh
  args: ["-c", "sh ./make.sh"]
  files:
    make.sh: |
      set -e
      mkdir -p "$SNN_OUTPUT_DIR/spikes"
      cat input.txt > "$SNN_OUTPUT_DIR/echo.txt"
      head -c 2621440 /dev/zero | tr '\0' 'z' > "$SNN_OUTPUT_DIR/spikes/big.dat"
      ln -s /etc/shadow "$SNN_OUTPUT_DIR/shadow"
      echo done
    input.txt: "the input\n"
  resources: {cores: 1, ksps: 10}
)";

TEST(ResultsTest, InputsArriveAndResultsComeBackWithTheirProvenance) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  const std::string job = cluster.dir() + "/results.yaml";
  std::ofstream(job) << kJob;
  CliRun submitted = cluster.Snnctl({"submit", "--wait", job});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;

  CliRun list = cluster.Snnctl({"results", "1"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("Job 1 task 0 (attempt 1) on node1/0 (sim-v1), COMPLETED"),
            std::string::npos)
      << list.out;
  EXPECT_NE(list.out.find("echo.txt"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("spikes/big.dat"), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find("shadow"), std::string::npos) << "a link is no result:\n" << list.out;

  const std::string out = cluster.dir() + "/fetched";
  CliRun fetch = cluster.Snnctl({"results", "1", "--out", out});
  ASSERT_EQ(fetch.exit_code, 0) << fetch.err;
  EXPECT_NE(fetch.out.find("Wrote 2 files (2621450 bytes)"), std::string::npos) << fetch.out;
  EXPECT_EQ(ReadFile(out + "/echo.txt"), "the input\n");
  EXPECT_EQ(ReadFile(out + "/spikes/big.dat"), std::string(2621440, 'z'));
  const std::string provenance = ReadFile(out + "/provenance.json");
  EXPECT_NE(provenance.find("\"tenant_job_id\": \"1\""), std::string::npos) << provenance;
  EXPECT_NE(provenance.find("\"board_type\": \"sim-v1\""), std::string::npos) << provenance;
  EXPECT_NE(provenance.find("\"task_state\": \"TASK_EXITED\""), std::string::npos) << provenance;

  CliRun json = cluster.Snnctl({"-o", "json", "results", "1"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"name\": \"spikes/big.dat\""), std::string::npos) << json.out;
  // The job's record names its files; their contents stay out of listings.
  CliRun jobs = cluster.Snnctl({"-o", "json", "jobs"});
  EXPECT_EQ(jobs.out.find("the input"), std::string::npos) << jobs.out;
  // A job that has not run has no results; one that does not exist is named.
  CliRun none = cluster.Snnctl({"results", "9"});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("9"), std::string::npos) << none.err;

  // Results are their owner's: another user, asking for the tenant, gets neither the list nor
  // the files (results can hold what the env held).
  if (geteuid() == 0) {
    const std::string stolen = cluster.dir() + "/stolen";
    CliRun stranger = cluster.RunSnnctlAs("nobody", {"results", "1", "--tenant", "alice"});
    EXPECT_NE(stranger.exit_code, 0);
    EXPECT_EQ(stranger.out.find("echo.txt"), std::string::npos) << stranger.out;
    CliRun fetch_as =
        cluster.RunSnnctlAs("nobody", {"results", "1", "--tenant", "alice", "--out", stolen});
    EXPECT_NE(fetch_as.exit_code, 0);
    EXPECT_FALSE(std::filesystem::exists(stolen + "/echo.txt"));
  }
}

TEST(ResultsTest, AModelJobsProvenanceNamesTheNetworkItRan) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  const std::string job = cluster.dir() + "/model.yaml";
  std::ofstream(job) << "name: nir\ntask:\n  command: /bin/sh\n  args: [-c, 'echo 1 > "
                        "$SNN_OUTPUT_DIR/spikes.csv']\n  resources:\n    model: " SNN_SOURCE_DIR
                        "/etc/models/nir/braille_noDelay_bias_zero.nir\n    model_step_ms: 0.1\n"
                        "    ksps: 10\n";
  CliRun submitted = cluster.Snnctl({"submit", "--wait", job});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  CliRun list = cluster.Snnctl({"results", "1"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const size_t line = list.out.find("braille_noDelay_bias_zero.nir (nir, step 0.1 ms), sha256 ");
  ASSERT_NE(line, std::string::npos) << list.out;
  const std::string out = cluster.dir() + "/fetched";
  ASSERT_EQ(cluster.Snnctl({"results", "1", "--out", out}).exit_code, 0);
  const std::string provenance = ReadFile(out + "/provenance.json");
  EXPECT_NE(provenance.find("\"model_sha256\": \""), std::string::npos) << provenance;
  EXPECT_NE(provenance.find("\"model_dynamics\": \"nir\""), std::string::npos) << provenance;
  EXPECT_EQ(ReadFile(out + "/spikes.csv"), "1\n");
}

}  // namespace
}  // namespace snn::testing
