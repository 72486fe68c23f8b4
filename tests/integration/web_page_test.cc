// The web page in a real browser: headless Chromium (Debian's chromium and chromium-driver)
// driven by tests/web/page_test.py (python3-selenium) against real daemons. It signs in with a
// token, submits a job from the page, watches it go to COMPLETED on the queue without a reload,
// reads its page (history, the core rectangle drawn, output, results, usage) and the pool, and
// leaves screenshots in the build directory's screenshots/ (not committed).
#include <gtest/gtest.h>
#include <sys/stat.h>
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

TEST(WebPageTest, ASubmittedJobGoesToCompletedOnThePageAndItsPlacementIsDrawn) {
  if (geteuid() != 0) GTEST_SKIP() << "makes a token of another user: needs root";
  ASSERT_EQ(access("/usr/bin/chromedriver", X_OK), 0)
      << "no /usr/bin/chromedriver: scripts/deps.sh installs chromium and chromium-driver";
  TestCluster cluster;
  std::ofstream(cluster.dir() + "/policy.yaml") << kPolicy;
  const uint16_t port =
      cluster.StartMasterWithApi({"--policy_file=" + cluster.dir() + "/policy.yaml"});
  ASSERT_NE(port, 0) << ReadFile(cluster.dir() + "/master.log");
  cluster.StartAgent("node1", SmallBoards(2, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  CliRun token = cluster.RunSnnctlAs("daemon", {"token", "create", "--parsable"});
  ASSERT_EQ(token.exit_code, 0) << token.err;
  // The job waits for this file, so the page shows it running before it completes. Its task runs
  // as daemon: the directory is one it can look in.
  char gate_dir[] = "/tmp/snn_web_gate_XXXXXX";
  ASSERT_NE(mkdtemp(gate_dir), nullptr);
  ASSERT_EQ(chmod(gate_dir, 0755), 0);
  const std::string shots = std::string(SNN_BINARY_DIR) + "/screenshots";
  std::filesystem::create_directories(shots);
  const std::string out = cluster.dir() + "/browser.out";
  const pid_t pid = SpawnLogged(
      {"/usr/bin/env", "SNN_API=https://127.0.0.1:" + std::to_string(port),
       "SNN_TOKEN=" + token.out.substr(0, token.out.find('\n')),
       "GATE=" + std::string(gate_dir) + "/go", "SCREENSHOT_DIR=" + shots,
       "BROWSER_DIR=" + cluster.dir() + "/browser", "SNN_SOURCE_DIR=" + std::string(SNN_SOURCE_DIR),
       "/usr/bin/python3", std::string(SNN_SOURCE_DIR) + "/tests/web/page_test.py"},
      out, out);
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  std::filesystem::remove_all(gate_dir);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << ReadFile(out) << "\n--- master log ---\n"
      << ReadFile(cluster.dir() + "/master.log");
  EXPECT_NE(ReadFile(out).find("page test: OK"), std::string::npos) << ReadFile(out);
  EXPECT_TRUE(std::filesystem::exists(shots + "/job.png"));
  EXPECT_TRUE(std::filesystem::exists(shots + "/pool.png"));
}

}  // namespace
}  // namespace snn::testing
