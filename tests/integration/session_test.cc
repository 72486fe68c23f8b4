// Interactive sessions with real daemons (issue 37): `snnctl alloc` grants a session and
// renews it while it runs; `snnctl run --alloc` runs steps in it, each on the session's cores
// exactly, with its own record, output and exit code; a client killed outright stops renewing
// and the master frees the boards after the keepalive, saying why; the idle reaper ends a
// session no step ran in for the policy's session_idle_limit.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <fstream>

#include "snn_paths.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/process.h"

namespace snn::testing {
namespace {

class SessionTest : public ::testing::Test {
 protected:
  void Start(const std::string& policy_scheduler = "") {
    std::vector<std::string> flags;
    if (!policy_scheduler.empty()) {
      const std::string policy = cluster_.dir() + "/policy.yaml";
      std::ofstream(policy) << "queues:\n  - {name: default, priority: 0}\nscheduler:\n"
                            << policy_scheduler;
      flags.push_back("--policy_file=" + policy);
    }
    cluster_.StartMaster(flags);
    cluster_.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }

  // `snnctl alloc ARGS` for tenant alice, left running; its stdout goes to `out`.
  pid_t StartAlloc(const std::vector<std::string>& args, const std::string& out) {
    std::vector<std::string> argv = {SNNCTL_BIN, "--master", cluster_.master_address(), "--tenant",
                                     "alice"};
    for (const auto& f : cluster_.auth().SnnctlFlags()) argv.push_back(f);
    argv.push_back("alloc");
    argv.insert(argv.end(), args.begin(), args.end());
    return SpawnLogged(argv, out, out + ".err");
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  uint32_t CoresUsed() {
    auto pool = cluster_.Pool();
    if (!pool.ok() || pool->nodes_size() != 1) return 999;
    return pool->nodes(0).boards(0).cores_used();
  }

  TestCluster cluster_;
};

TEST_F(SessionTest, StepsRunOnTheSessionsCoresAndAKilledClientFreesThemAfterTheKeepalive) {
  Start();
  const std::string out = cluster_.dir() + "/alloc.out";
  const pid_t alloc = StartAlloc({"--shape", "2x2", "--keepalive", "2s"}, out);
  ASSERT_GT(alloc, 0);
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    return Read(out).find("export SNN_ALLOC=1") != std::string::npos;
  })) << Read(out)
      << Read(out + ".err");
  EXPECT_NE(Read(out).find("Granted session 1 (keepalive 2s): task 0 on node1/board0 cores 2x2"),
            std::string::npos)
      << Read(out);
  EXPECT_EQ(CoresUsed(), 4u);  // held for the session, no step running

  // A step runs on the session's rectangle, prints its output, and gives its exit code.
  CliRun hello = cluster_.Snnctl({"run", "--alloc", "1", "/bin/sh", "-c", "echo hi $SNN_CORES"});
  EXPECT_EQ(hello.exit_code, 0) << hello.err;
  EXPECT_NE(hello.out.find("hi "), std::string::npos) << hello.out;
  CliRun failing = cluster_.Snnctl({"run", "--alloc", "1", "/bin/sh", "-c", "echo no >&2; exit 3"});
  EXPECT_EQ(failing.exit_code, 3) << failing.err;
  EXPECT_NE(failing.err.find("no"), std::string::npos) << failing.err;
  auto session = cluster_.Show(1);
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(session->steps(), 2u);
  EXPECT_EQ(session->state(), v1::RUNNING);
  for (uint64_t step : {2, 3}) {
    auto job = cluster_.Show(step);
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(job->spec().kind(), v1::STEP);
    ASSERT_EQ(job->tasks_size(), 1);
    EXPECT_EQ(job->tasks(0).mapping().rect().SerializeAsString(),
              session->tasks(0).mapping().rect().SerializeAsString());
  }
  EXPECT_EQ(CoresUsed(), 4u);  // the steps' cores were the session's all along

  // Killed outright: nothing releases the session but its keepalive.
  ASSERT_EQ(kill(alloc, SIGKILL), 0);
  waitpid(alloc, nullptr, 0);
  ASSERT_TRUE(cluster_.WaitForState(1, v1::TIMEOUT)) << cluster_.Snnctl({"show", "1"}).out;
  session = cluster_.Show(1);
  ASSERT_TRUE(session.ok());
  EXPECT_NE(session->reason().find("not renewed for 2s"), std::string::npos) << session->reason();
  // Ended within keepalive + 2 s of its last renewal, on the master's clock: so of the kill.
  EXPECT_LE(session->end_ms() - session->renewed_ms(), 2000 + 2000);
  EXPECT_GE(session->end_ms() - session->renewed_ms(), 2000);
  EXPECT_EQ(CoresUsed(), 0u);
  CliRun late = cluster_.Snnctl({"run", "--alloc", "1", "/bin/true"});
  EXPECT_NE(late.exit_code, 0);
  EXPECT_NE(late.err.find("no session 1 that runs now"), std::string::npos) << late.err;
}

TEST_F(SessionTest, ADetachedSessionIsRenewedByHandAndTheIdleReaperEndsItWithItsReason) {
  Start("  session_idle_limit: 2s\n");
  CliRun alloc = cluster_.Snnctl({"alloc", "--cores", "2", "--keepalive", "1h", "--detach"});
  ASSERT_EQ(alloc.exit_code, 0) << alloc.err;
  EXPECT_NE(alloc.out.find("export SNN_ALLOC=1"), std::string::npos) << alloc.out;
  CliRun renew = cluster_.Snnctl({"alloc", "--renew", "1", "--keepalive", "30m"});
  EXPECT_EQ(renew.exit_code, 0) << renew.err;
  EXPECT_NE(renew.out.find("Renewed session 1 (keepalive 30m)"), std::string::npos) << renew.out;
  EXPECT_NE(cluster_.Snnctl({"alloc", "--renew", "7"}).err.find("not found"), std::string::npos);
  ASSERT_TRUE(cluster_.WaitForState(1, v1::TIMEOUT)) << cluster_.Snnctl({"show", "1"}).out;
  auto session = cluster_.Show(1);
  ASSERT_TRUE(session.ok());
  EXPECT_NE(session->reason().find("idle: no step ran in it for 2s"), std::string::npos)
      << session->reason();
  EXPECT_GE(session->idle_ms(), 2000);
  EXPECT_EQ(CoresUsed(), 0u);
  // Its usage record shows the time it held its cores, and how much of it was idle.
  CliRun usage = cluster_.Snnctl({"usage", "-o", "json"});
  EXPECT_NE(usage.out.find("\"kind\": \"session\""), std::string::npos) << usage.out;
  EXPECT_NE(usage.out.find("\"idle_ms\""), std::string::npos) << usage.out;
}

}  // namespace
}  // namespace snn::testing
