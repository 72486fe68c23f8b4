// Pass-through boards with real daemons: an agent whose boards file gives a board to the
// Ethernet reference driver (snn-driver-ether, on snn-board-emu processes on loopback
// addresses of their own). A task gets SNN_BOARD_ENDPOINTS and the site's alias and talks to
// its board itself; the next tenant finds nothing of the last one on it; a failing health
// check drains the board with its output as the reason; a driver SIGKILLed mid-job comes back
// and the job goes on.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/base/clock.h"
#include "common/rpc/asio.h"
#include "tests/integration/emulated_boards.h"
#include "tests/test_util/process.h"

namespace snn::testing {
namespace {

// The task's side: one datagram to its board (SNN_BOARD_ENDPOINTS), the answer printed.
std::string AskBoard(const std::string& request) {
  return "python3 -c \"import os,socket\n"
         "host, port = os.environ['SNN_BOARD_ENDPOINTS'].split('//')[1].rsplit(':', 1)\n"
         "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(20)\n"
         "s.connect((host, int(port))); s.send(b'" +
         request + "'); print(s.recv(1000).decode())\"";
}

// The pid of the process whose command line holds `needle` (0: none).
pid_t FindProcess(const std::string& needle) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = ReadFile(entry.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos) return static_cast<pid_t>(std::stoi(name));
  }
  return 0;
}

template <int kBoards>
class PassThroughFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(emulated_.started());
    cluster_.StartMaster(MasterFlags());
    cluster_.StartAgent("node1", emulated_.AgentBoards());
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }

  virtual std::vector<std::string> MasterFlags() { return {}; }

  // Runs `script` as a job of `tenant` on the board; its output (stdout) once it ended.
  std::string RunJob(const std::string& script, const std::string& tenant) {
    v1::JobSpec spec = ShellJob(script);
    spec.mutable_task()->mutable_resources()->set_board_type("ether-v1");
    auto submitted = cluster_.Submit(spec, tenant);
    EXPECT_TRUE(submitted.ok()) << submitted.status().ToString();
    if (!submitted.ok()) return "";
    const uint64_t id = last_job_ = submitted->tenant_job_id();
    EXPECT_TRUE(TestCluster::WaitUntil([&] {
      auto job = cluster_.Show(id, tenant);
      return job.ok() && (job->state() == v1::COMPLETED || job->state() == v1::FAILED);
    })) << "job "
        << id << " of " << tenant << " never ended";
    auto job = cluster_.Show(id, tenant);
    EXPECT_TRUE(job.ok() && job->state() == v1::COMPLETED)
        << (job.ok() ? job->reason() : job.status().ToString());
    CliRun logs = cluster_.Snnctl({"logs", std::to_string(id)}, tenant);
    return logs.out;
  }

  std::string BoardState(int i = 0) {
    auto pool = cluster_.Pool();
    if (!pool.ok() || pool->nodes_size() != 1 || pool->nodes(0).boards_size() != kBoards) return "";
    return pool->nodes(0).boards(i).state();
  }

  TestCluster cluster_;
  EmulatedBoards emulated_{cluster_.dir(), kBoards};
  uint64_t last_job_ = 0;  // RunJob's
};

using PassThroughTest = PassThroughFixture<1>;
using BoardIsolationTest = PassThroughFixture<3>;

TEST_F(PassThroughTest, ATaskTalksToItsBoardAndTheNextTenantFindsNothingOfIt) {
  const std::string a =
      RunJob("echo \"endpoints=$SNN_BOARD_ENDPOINTS ips=$SLURM_FPGA_IPS\"; " +
                 AskBoard("LOAD weights secret-of-alice") + "; " + AskBoard("READ weights"),
             "alice");
  EXPECT_NE(a.find("endpoints=udp://" + emulated_.boards()[0].data()), std::string::npos) << a;
  EXPECT_NE(a.find("ips=127.0.0.2"), std::string::npos) << a;
  EXPECT_NE(a.find("loaded\nsecret-of-alice"), std::string::npos) << a;
  // The board was released (reset) when alice's task ended: bob reads nothing of hers.
  const std::string b = RunJob(AskBoard("READ weights"), "bob");
  EXPECT_NE(b.find("none"), std::string::npos) << b;
  EXPECT_EQ(b.find("secret-of-alice"), std::string::npos) << b;
  EXPECT_EQ(BoardState(), "UP");
}

TEST_F(PassThroughTest, AJobThatAsksForAnyBoardIsNeverGivenAPassThroughOne) {
  // First in the queue, but it names no board type: the pass-through board is not for it.
  auto any = cluster_.Submit(ShellJob("echo ran"), "alice");
  if (any.ok()) {
    RunJob("true", "alice");  // an ether-v1 job after it has the board, runs and ends
    auto job = cluster_.Show(any->tenant_job_id(), "alice");
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(job->state(), v1::PENDING) << "a job for any board ran on the pass-through one";
  } else {  // or admission says at once that nothing can hold it
    EXPECT_NE(any.status().message().find("board"), std::string::npos) << any.status().message();
  }
}

TEST_F(PassThroughTest, AFailingHealthCheckDrainsTheBoardWithItsOutput) {
  ASSERT_EQ(emulated_.Manage(0, "FAULT fan 3 stopped"), "fault set");
  RunJob("true", "alice");  // its end checks the board
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return BoardState().find("DRAIN") == 0; }))
      << BoardState();
  EXPECT_NE(BoardState().find("fan 3 stopped"), std::string::npos) << BoardState();
}

TEST_F(PassThroughTest, ADriverKilledMidJobComesBackAndTheJobGoesOn) {
  const std::string flag = cluster_.dir() + "/go";
  v1::JobSpec spec =
      ShellJob("while [ ! -e " + flag + " ]; do sleep 0.05; done; " + AskBoard("PING"));
  spec.mutable_task()->mutable_resources()->set_board_type("ether-v1");
  auto submitted = cluster_.Submit(spec, "alice");
  ASSERT_TRUE(submitted.ok());
  ASSERT_NE(cluster_.WaitForRunningTask(submitted->tenant_job_id()).pid(), 0u);
  const std::string driver_line = "snn-driver-ether --boards=" + cluster_.dir();
  const pid_t driver = FindProcess(driver_line);
  ASSERT_GT(driver, 0);
  ASSERT_EQ(kill(driver, SIGKILL), 0);
  // Started again by the agent at once, while the job runs and nothing asks the driver anything.
  EXPECT_TRUE(TestCluster::WaitUntil([&] {
    const pid_t again = FindProcess(driver_line);
    return again != 0 && again != driver;
  }));
  std::ofstream(flag) << "go\n";
  ASSERT_TRUE(cluster_.WaitForState(submitted->tenant_job_id(), v1::COMPLETED));
  EXPECT_NE(cluster_.Snnctl({"logs", std::to_string(submitted->tenant_job_id())}).out.find("PONG"),
            std::string::npos);
  EXPECT_GT(cluster_.agent_pid("node1"), 0);
  // The release at the job's end went to the new driver process, which checked the board.
  EXPECT_EQ(BoardState(), "UP");
}

// Issue 35 (b): alice's task sends 1,000 datagrams to each of the other boards' data ports (one
// idle, one bob's) and to every board's management port, its own included: none arrives, while
// its own board answers it through the relay.
TEST_F(BoardIsolationTest, ATaskReachesItsOwnBoardAndNothingElse) {
  const std::string flag = cluster_.dir() + "/bob-done";
  v1::JobSpec held = ShellJob("while [ ! -e " + flag + " ]; do sleep 0.05; done");
  held.mutable_task()->mutable_resources()->set_board_type("ether-v1");
  auto bob = cluster_.Submit(held, "bob");
  ASSERT_TRUE(bob.ok()) << bob.status().ToString();
  auto bob_is = [&](v1::JobState state) {
    return TestCluster::WaitUntil([&] {
      auto job = cluster_.Show(bob->tenant_job_id(), "bob");
      return job.ok() && job->state() == state;
    });
  };
  ASSERT_TRUE(bob_is(v1::RUNNING));

  std::string targets;
  for (const EmulatedBoard& board : emulated_.boards()) {
    targets += board.data() + " " + board.address + ":" + std::to_string(board.mgmt_port) + " ";
  }
  const std::string script = cluster_.dir() + "/intrude.py";
  std::ofstream(script) << "import os, socket\n"
                           "mine = os.environ['SNN_BOARD_ENDPOINTS'].split('//')[1]\n"
                           "print('mine', mine)\n"
                           "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                           "for target in '"
                        << targets
                        << "'.split():\n"
                           "    if target == mine: continue\n"
                           "    host, port = target.rsplit(':', 1)\n"
                           "    sent = 0\n"
                           "    for i in range(1000):\n"
                           "        try:\n"
                           "            s.sendto(b'FAULT stolen by alice', (host, int(port)))\n"
                           "            sent += 1\n"
                           "        except OSError:\n"
                           "            pass\n"
                           "    print('tried', sent, 'to', target)\n"
                           "own = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                           "own.settimeout(20)\n"
                           "host, port = mine.rsplit(':', 1)\n"
                           "own.connect((host, int(port)))\n"
                           "own.send(b'PING')\n"
                           "print('own board:', own.recv(100).decode())\n";
  std::vector<std::string> before;
  for (size_t i = 0; i < emulated_.boards().size(); ++i) {
    before.push_back(emulated_.Manage(i, "STATS"));
  }
  const std::string out = RunJob("python3 " + script, "alice");
  EXPECT_NE(out.find("own board: PONG"), std::string::npos) << out;
  size_t tries = 0;
  for (size_t at = out.find("tried 1000 to"); at != std::string::npos;
       at = out.find("tried 1000 to", at + 1)) {
    ++tries;
  }
  EXPECT_EQ(tries, 5u) << "two other boards' data ports and three management ports\n" << out;
  for (size_t i = 0; i < emulated_.boards().size(); ++i) {
    const EmulatedBoard& board = emulated_.boards()[i];
    const bool alices = out.find("mine " + board.data()) != std::string::npos;
    if (!alices) {
      EXPECT_EQ(emulated_.Manage(i, "STATS"), before[i]) << "packets reached " << board.data();
    }
    EXPECT_EQ(emulated_.Manage(i, "HEALTH").rfind("ok", 0), 0u)
        << "a datagram reached the management port of " << board.address;
  }
  std::ofstream(flag) << "done\n";
  EXPECT_TRUE(bob_is(v1::COMPLETED));
}

// Issue 64: a task on a simulated board (another node of the same host here) reached the
// Ethernet boards' data and management ports, faulted another tenant's board and fed it data.
// Its network is now what its board grants: nothing. The same datagrams go nowhere, and a TCP
// listener on the host's loopback is out of reach; its spike gateway (a Unix socket) is not.
TEST_F(BoardIsolationTest, ATaskOnASimulatedBoardReachesNoBoardsPorts) {
  if (geteuid() != 0) GTEST_SKIP() << "network namespaces for tasks need a root agent";
  cluster_.StartAgent("node2", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; }));
  asio::io_context io;
  tcp::acceptor listener(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::string targets;
  for (const EmulatedBoard& board : emulated_.boards()) {
    targets += board.data() + " " + board.address + ":" + std::to_string(board.mgmt_port) + " ";
  }
  const std::string script = cluster_.dir() + "/sim-intrude.py";
  std::ofstream(script)
      << "import os, socket\n"
         "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
         "for target in '"
      << targets
      << "'.split():\n"
         "    host, port = target.rsplit(':', 1)\n"
         "    for i in range(100):\n"
         "        try:\n"
         "            s.sendto(b'FAULT from a simulated board', (host, int(port)))\n"
         "        except OSError:\n"
         "            pass\n"
         "t = socket.socket()\n"
         "t.settimeout(5)\n"
         "try:\n"
         "    t.connect(('127.0.0.1', "
      << listener.local_endpoint().port()
      << "))\n"
         "    print('tcp: reached')\n"
         "except OSError as e:\n"
         "    print('tcp: refused')\n"
         "print('gateway:', os.path.exists(os.environ.get('SNN_GATEWAY', '')))\n";
  std::vector<std::string> before;
  for (size_t i = 0; i < emulated_.boards().size(); ++i) {
    before.push_back(emulated_.Manage(i, "STATS"));
  }
  v1::JobSpec spec = ShellJob("python3 " + script);
  spec.mutable_task()->mutable_resources()->set_board_type("sim-v1");
  auto submitted = cluster_.Submit(spec, "alice");
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  ASSERT_TRUE(cluster_.WaitForState(submitted->tenant_job_id(), v1::COMPLETED));
  const std::string out =
      cluster_.Snnctl({"logs", std::to_string(submitted->tenant_job_id())}, "alice").out;
  EXPECT_NE(out.find("tcp: refused"), std::string::npos) << out;
  EXPECT_NE(out.find("gateway: True"), std::string::npos) << out;
  for (size_t i = 0; i < emulated_.boards().size(); ++i) {
    EXPECT_EQ(emulated_.Manage(i, "STATS"), before[i])
        << "packets reached " << emulated_.boards()[i].data();
    EXPECT_EQ(emulated_.Manage(i, "HEALTH").rfind("ok", 0), 0u)
        << "a datagram reached the management port of " << emulated_.boards()[i].address;
  }
}

// Issue 35 (d): with the policy's suspend_after, an idle board is powered off (the board
// itself, and pool status says so); a job that gets it waits while it is powered on and booted,
// and its task says how long that took; once idle again it is powered off again.
class BoardPowerTest : public PassThroughFixture<1> {
 protected:
  std::vector<std::string> MasterFlags() override {
    const std::string policy = cluster_.dir() + "/policy.yaml";
    std::ofstream(policy) << "queues:\n  - {name: default, priority: 0}\n"
                             "scheduler:\n  suspend_after: 1s\n";
    return {"--policy_file=" + policy};
  }
  std::string Power() {
    auto pool = cluster_.Pool();
    if (!pool.ok() || pool->nodes_size() != 1 || pool->nodes(0).boards_size() != 1) return "";
    return pool->nodes(0).boards(0).info().power();
  }
};

TEST_F(BoardPowerTest, AnIdleBoardPowersOffAndAJobPowersItOnAndBootsIt) {
  EXPECT_NE(cluster_.Snnctl({"policy", "show"}).out.find("driver boards power off after"),
            std::string::npos);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return Power() == "off"; })) << Power();
  EXPECT_EQ(emulated_.Manage(0, "STATUS").rfind("power=off", 0), 0u);
  EXPECT_NE(cluster_.Snnctl({"pool", "status"}).out.find("UP (powered off)"), std::string::npos);

  const std::string out = RunJob(AskBoard("PING"), "alice");
  EXPECT_NE(out.find("PONG"), std::string::npos) << out;
  auto job = cluster_.Show(last_job_, "alice");
  ASSERT_TRUE(job.ok() && job->tasks_size() == 1);
  const std::string& detail = job->tasks(0).detail();
  const std::string booted = "was powered off: powered on and booted in ";
  const size_t at = detail.find(booted);
  ASSERT_NE(at, std::string::npos) << detail;
  EXPECT_GE(std::stoi(detail.substr(at + booted.size())), 50) << "the emulator boots in 50 ms";
  EXPECT_NE(cluster_.Snnctl({"show", std::to_string(last_job_)}).out.find(booted),
            std::string::npos);
  // Idle again: off again.
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return Power() == "off"; })) << Power();
}

// A powered-off board that cannot be brought back: the board is drained with the driver's
// error, and the job that was to run on it is requeued with the reason (it never ran).
TEST_F(BoardPowerTest, ABoardThatCannotBeBroughtBackIsDrainedAndItsJobRequeued) {
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return Power() == "off"; })) << Power();
  kill(emulated_.boards()[0].pid, SIGKILL);  // the board answers nothing any more
  v1::JobSpec spec = ShellJob("echo ran");
  spec.mutable_task()->mutable_resources()->set_board_type("ether-v1");
  auto submitted = cluster_.Submit(spec, "alice");
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  const uint64_t id = submitted->tenant_job_id();
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster_.Show(id, "alice");
    return job.ok() && job->lost_count() == 1 && job->state() == v1::PENDING;
  })) << cluster_.Snnctl({"show", std::to_string(id)}).out;
  auto job = cluster_.Show(id, "alice");
  ASSERT_TRUE(job.ok());
  std::string requeued;
  for (const v1::Transition& t : job->history()) {
    if (t.from() == v1::RUNNING && t.to() == v1::PENDING) requeued = t.reason();
  }
  EXPECT_NE(requeued.find("could not be powered on and booted"), std::string::npos) << requeued;
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return BoardState().find("DRAIN") == 0; }))
      << BoardState();
  EXPECT_NE(BoardState().find("power-on and boot failed"), std::string::npos) << BoardState();
}

}  // namespace
}  // namespace snn::testing
