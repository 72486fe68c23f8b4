// The user guide's notebook (docs/notebooks/nir-from-a-notebook.ipynb), run by nbclient with
// Debian's python3 kernel against real daemons, from a process that has what a notebook host
// has: the snn module, an address, a CA file and a token, with no snnctl and no MUNGE on its
// PATH. It submits a NIR export from etc/models and reads its output and results, and follows a
// running job's output live.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
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
)";

TEST(NotebookTest, TheGuidesNotebookRunsANirExportAndFollowsOutputLive) {
  if (geteuid() != 0) GTEST_SKIP() << "makes a token of another user's: needs root";
  TestCluster cluster;
  const uint16_t port = cluster.StartMasterWithApiAndPolicy(kPolicy);
  ASSERT_NE(port, 0) << ReadFile(cluster.dir() + "/master.log");
  cluster.StartAgent("node1",
                     "boards:\n  - {type: sim-v1, mesh: 8x8, neurons_per_core: 256, "
                     "ksps: 100000, streams: 4}\n");
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  CliRun token = cluster.RunSnnctlAs("daemon", {"token", "create", "--parsable"});
  ASSERT_EQ(token.exit_code, 0) << token.err;
  const std::string empty_path = cluster.dir() + "/bin";
  std::filesystem::create_directories(empty_path);
  const std::string out = cluster.dir() + "/notebook.out";
  const pid_t pid =
      SpawnLogged({"/usr/bin/env", "-i", "PATH=" + empty_path, "HOME=" + cluster.dir(),
                   "JUPYTER_RUNTIME_DIR=" + cluster.dir() + "/jupyter",
                   "PYTHONPATH=" + std::string(SNN_SOURCE_DIR) + "/python",
                   "SNN_API=https://127.0.0.1:" + std::to_string(port),
                   "SNN_TOKEN=" + token.out.substr(0, token.out.find('\n')),
                   "SNN_CA_FILE=" + cluster.auth().ca_file(),
                   "SNN_MODELS=" + std::string(SNN_SOURCE_DIR) + "/etc/models",
                   "SNN_EXAMPLE_NIR=" SNN_EXAMPLE_NIR_BIN, "/usr/bin/python3",
                   std::string(SNN_SOURCE_DIR) + "/tests/notebook/run_notebook.py",
                   std::string(SNN_SOURCE_DIR) + "/docs/notebooks/nir-from-a-notebook.ipynb"},
                  out, out);
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const std::string text = ReadFile(out);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_NE(text.find("1 node(s) up"), std::string::npos) << text;
  EXPECT_NE(text.find("COMPLETED 2 cores"), std::string::npos) << text;
  EXPECT_NE(text.find("most active output neuron: "), std::string::npos) << text;
  EXPECT_NE(text.find("model lif_rockpool.nir "), std::string::npos) << text;
  EXPECT_NE(text.find("step 1\nstep 2\nstep 3\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace snn::testing
