// The Python client (python/snn, standard library only) against real daemons: the master with
// its HTTP API and an agent; tests/python/client_test.py does the calls a notebook would.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "common/base/file_util.h"
#include "snn_paths.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/process.h"

namespace snn::testing {
namespace {

constexpr char kPolicy[] = R"(access:
  personal_tenants: false
tenants:
  - name: lab-a
    users: [daemon]
  - name: lab-b
    users: [sys]
)";

TEST(PythonClientTest, SubmitWaitWatchLogsCancelAndAnExecutorOf200Jobs) {
  if (geteuid() != 0) GTEST_SKIP() << "makes tokens of other users: needs root";
  TestCluster cluster;
  std::ofstream(cluster.dir() + "/policy.yaml") << kPolicy;
  const uint16_t port =
      cluster.StartMasterWithApi({"--policy_file=" + cluster.dir() + "/policy.yaml"});
  ASSERT_NE(port, 0) << ReadFile(cluster.dir() + "/master.log");
  const std::string api = "https://127.0.0.1:" + std::to_string(port);
  // Two boards of 16 cores, a stream per core: 32 of the Executor's jobs at a time.
  cluster.StartAgent("node1", SmallBoards(2, 4, 1000, 32));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  auto token_of = [&](const std::string& user) {
    CliRun run = cluster.RunSnnctlAs(user, {"token", "create", "--parsable"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.out.substr(0, run.out.find('\n'));
  };
  const std::string out = cluster.dir() + "/python.out";
  const pid_t pid = SpawnLogged(
      {"/usr/bin/env", "PYTHONPATH=" + std::string(SNN_SOURCE_DIR) + "/python", "SNN_API=" + api,
       "SNN_TOKEN=" + token_of("daemon"), "SNN_OTHER_TOKEN=" + token_of("sys"),
       "SNN_CA_FILE=" + cluster.auth().ca_file(), "TEST_DIR=" + cluster.dir(),
       "SNN_SOURCE_DIR=" + std::string(SNN_SOURCE_DIR), "SNN_EXAMPLE_NIR=" SNN_EXAMPLE_NIR_BIN,
       "/usr/bin/python3", std::string(SNN_SOURCE_DIR) + "/tests/python/client_test.py"},
      out, out);
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(out);
  EXPECT_NE(ReadFile(out).find("Ran 14 tests"), std::string::npos) << ReadFile(out);
}

}  // namespace
}  // namespace snn::testing
