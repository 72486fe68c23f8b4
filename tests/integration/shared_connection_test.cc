// snnctl's shared connection with real daemons: commands go through it when it is open (its
// count of relayed requests grows) and connect on their own when it is not; it survives the
// master's restart (a pooled connection the master closed is not used); it serves no process
// of another user; start refuses what it cannot serve; stop and idleness end its process; with
// standby masters, it follows the leader.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "common/rpc/frame.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/etcd_cluster.h"

namespace snn::testing {
namespace {

class SharedConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The relay's socket goes under $XDG_RUNTIME_DIR/snnctl, here the cluster's dir.
    setenv("XDG_RUNTIME_DIR", cluster_.dir().c_str(), 1);
    cluster_.StartMaster();
    cluster_.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
    std::ofstream(job_) << "task: {command: /bin/true, resources: {cores: 1, ksps: 1}}\n";
  }
  void TearDown() override {
    cluster_.Snnctl({"connection", "stop"});  // whatever the test left open
    unsetenv("XDG_RUNTIME_DIR");
  }

  // The relay's count of requests relayed, from `connection status` (-1: none open).
  long Relayed() {
    CliRun status = cluster_.Snnctl({"connection", "status"});
    std::smatch m;
    if (status.exit_code != 0 ||
        !std::regex_search(status.out, m, std::regex("requests relayed: (\\d+)"))) {
      return -1;
    }
    return std::stol(m[1]);
  }

  static pid_t PidIn(const std::string& text) {
    std::smatch m;
    return std::regex_search(text, m, std::regex("\\(pid (\\d+)\\)")) ? std::stoi(m[1]) : -1;
  }

  // Gone, or a zombie its reaper has not collected yet.
  static bool Ended(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const auto paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
  }

  std::string SocketDir() const { return cluster_.dir() + "/snnctl"; }
  std::vector<std::string> Sockets() const {
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(SocketDir(), ec)) {
      if (entry.path().extension() == ".sock") found.push_back(entry.path().string());
    }
    return found;
  }

  TestCluster cluster_;
  const std::string job_ = cluster_.dir() + "/job.yaml";
};

TEST_F(SharedConnectionTest, CommandsGoThroughItWhileOpenAndOnTheirOwnOtherwise) {
  CliRun start = cluster_.Snnctl({"connection", "start"});
  ASSERT_EQ(start.exit_code, 0) << start.err;
  EXPECT_NE(start.out.find("Sharing connections to " + cluster_.master_address()),
            std::string::npos)
      << start.out;
  const pid_t relay = PidIn(start.out);
  ASSERT_GT(relay, 0) << start.out;
  CliRun again = cluster_.Snnctl({"connection", "start"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("is open already"), std::string::npos) << again.err;
  ASSERT_EQ(Relayed(), 0);

  CliRun submit = cluster_.Snnctl({"submit", "--wait", job_});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("Job 1 COMPLETED"), std::string::npos) << submit.out;
  const long after_submit = Relayed();
  EXPECT_GE(after_submit, 2) << "the submit and its waits went through the relay";
  // The master's refusal comes back as it is, one line.
  CliRun missing = cluster_.Snnctl({"show", "99"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(Relayed(), after_submit + 1);

  // The master restarts: the connections the relay kept are closed, and not used again.
  cluster_.StopMaster();
  cluster_.StartMaster();
  CliRun after_restart = cluster_.Snnctl({"show", "1"});
  EXPECT_EQ(after_restart.exit_code, 0) << after_restart.err;
  EXPECT_EQ(Relayed(), after_submit + 2);

  CliRun stop = cluster_.Snnctl({"connection", "stop"});
  ASSERT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_NE(stop.out.find("Stopped the shared connection"), std::string::npos) << stop.out;
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return Ended(relay); }));
  CliRun none = cluster_.Snnctl({"connection", "status"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no shared connection to " + cluster_.master_address() + " is open"),
            std::string::npos)
      << none.err;
  // Without it, the same commands connect on their own, and say the same.
  CliRun direct = cluster_.Snnctl({"show", "99"});
  EXPECT_EQ(direct.exit_code, 1);
  EXPECT_EQ(direct.err, missing.err);
  EXPECT_EQ(cluster_.Snnctl({"submit", job_}).exit_code, 0);
}

TEST_F(SharedConnectionTest, NoOtherUserIsServedAndAnOpenDirectoryIsNotUsed) {
  ASSERT_EQ(cluster_.Snnctl({"connection", "start"}).exit_code, 0);
  // A directory others may enter: commands do not trust it, and work on their own.
  ASSERT_EQ(chmod(SocketDir().c_str(), 0755), 0);
  CliRun status = cluster_.Snnctl({"connection", "status"});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_NE(status.err.find("closed to others (mode 0700)"), std::string::npos) << status.err;
  EXPECT_EQ(cluster_.Snnctl({"submit", job_}).exit_code, 0);
  ASSERT_EQ(chmod(SocketDir().c_str(), 0700), 0);
  EXPECT_EQ(Relayed(), 0) << "the submit did not go through the relay";

  if (geteuid() != 0) GTEST_SKIP() << "connects as another user: needs root";
  // Even with the directory and the socket opened to everyone, another user's process that
  // asks is cut off unanswered.
  const std::vector<std::string> sockets = Sockets();
  ASSERT_EQ(sockets.size(), 1u);
  const std::string& socket = sockets[0];
  ASSERT_EQ(chmod(SocketDir().c_str(), 0711), 0);
  ASSERT_EQ(chmod(socket.c_str(), 0666), 0);
  const pid_t child = fork();
  if (child == 0) {
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(2);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", socket.c_str());
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) _exit(3);
    v1::Envelope ask;
    ask.set_id(1);
    ask.set_method("snnctl.connection.status");
    const std::string frame = EncodeFrame(ask);
    // The relay may have closed it before this is written (EPIPE): unanswered all the same.
    (void)!send(fd, frame.data(), frame.size(), MSG_NOSIGNAL);
    char byte;
    _exit(read(fd, &byte, 1) > 0 ? 5 : 0);
  }
  int status_code = 0;
  waitpid(child, &status_code, 0);
  EXPECT_TRUE(WIFEXITED(status_code));
  EXPECT_EQ(WEXITSTATUS(status_code), 0) << "2, 3: could not connect; 5: was answered";
  ASSERT_EQ(chmod(SocketDir().c_str(), 0700), 0);
  EXPECT_EQ(Relayed(), 0);
}

TEST_F(SharedConnectionTest, StartRefusesWhatItCannotServeAndIdlenessEndsIt) {
  CliRun idle = cluster_.Snnctl({"connection", "start", "--idle", "0"});
  EXPECT_EQ(idle.exit_code, 1);
  EXPECT_NE(idle.err.find("--idle must be a duration"), std::string::npos) << idle.err;
  CliRun no_tls = cluster_.Snnctl({"--auth", "none", "connection", "start"});
  EXPECT_EQ(no_tls.exit_code, 1);
  EXPECT_NE(no_tls.err.find("--auth none"), std::string::npos) << no_tls.err;
  // A master that does not answer: refused at once, nothing left behind.
  CliRun unreachable = cluster_.RunSnnctl({"--master", "127.0.0.1:1", "connection", "start"});
  EXPECT_EQ(unreachable.exit_code, 1);
  EXPECT_NE(unreachable.err.find("cannot reach the master at 127.0.0.1:1"), std::string::npos)
      << unreachable.err;
  EXPECT_TRUE(Sockets().empty());

  CliRun start = cluster_.Snnctl({"connection", "start", "--idle", "1s"});
  ASSERT_EQ(start.exit_code, 0) << start.err;
  EXPECT_NE(start.out.find("ends after 1s with no command"), std::string::npos) << start.out;
  const pid_t relay = PidIn(start.out);
  ASSERT_GT(relay, 0);
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return Ended(relay); }, 60000));
  EXPECT_EQ(Relayed(), -1);
}

// With standby masters: the relay's connections go to the leader (a standby redirects them), and
// after a takeover the next command reaches the new leader through it.
TEST(SharedConnectionHaTest, CommandsReachTheLeaderBeforeAndAfterATakeover) {
  if (!EtcdCluster::Available()) GTEST_SKIP() << "etcd is not installed (etcd-server)";
  TestCluster cluster;
  EtcdCluster etcd(cluster.dir());
  ASSERT_TRUE(etcd.Start().ok());
  setenv("XDG_RUNTIME_DIR", cluster.dir().c_str(), 1);
  cluster.StartHaMaster("m1", etcd.endpoints(), {"--ha_lease_s=2"});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.HaLeader() == "m1"; }));
  cluster.StartHaMaster("m2", etcd.endpoints(), {"--ha_lease_s=2"});
  cluster.StartAgent("node1", SmallBoards(1, 8));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  const std::string job = cluster.dir() + "/job.yaml";
  std::ofstream(job) << "hold: true\ntask: {command: /bin/true, resources: {cores: 1, ksps: 1}}\n";
  // The standby first in the list: its redirect is followed.
  const std::vector<std::string> masters = {
      "--master", cluster.ha_master_address("m2") + "," + cluster.ha_master_address("m1"),
      "--tenant", "alice"};
  auto snnctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), masters.begin(), masters.end());
    return cluster.RunSnnctl(args);
  };
  CliRun start = snnctl({"connection", "start"});
  ASSERT_EQ(start.exit_code, 0) << start.err;
  CliRun before = snnctl({"submit", job});
  EXPECT_EQ(before.exit_code, 0) << before.err;
  cluster.KillHaMaster("m1");
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.HaLeader() == "m2"; }, 30000));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }, 30000));
  CliRun after = snnctl({"submit", job});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.out.find("Submitted job 2 "), std::string::npos) << after.out;
  CliRun status = snnctl({"connection", "status"});
  EXPECT_NE(status.out.find("requests relayed: 2;"), std::string::npos) << status.out;
  EXPECT_EQ(snnctl({"connection", "stop"}).exit_code, 0);
  unsetenv("XDG_RUNTIME_DIR");
}

}  // namespace
}  // namespace snn::testing
