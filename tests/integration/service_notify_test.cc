// The daemons speak systemd's notify protocol: READY=1 once serving, STATUS= lines, and
// watchdog pings from their event loop. A fake notify socket stands in for systemd; stopping
// the daemon (SIGSTOP, as a wedged loop would) stops the pings, and they resume after SIGCONT.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/base/clock.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

constexpr int kWatchdogMs = 200;

// A datagram socket in the place of systemd's, bound to `path`.
class FakeNotifySocket {
 public:
  explicit FakeNotifySocket(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~FakeNotifySocket() {
    close(fd_);
    unlink(path_.c_str());
  }
  bool bound() const { return bound_; }

  // The next message within `timeout_ms`, or "" if none came.
  std::string Receive(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return "";
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

  // Waits up to `timeout_ms` for a message containing `text`; returns it, or "".
  std::string WaitFor(const std::string& text, int timeout_ms) {
    const RealDeadline deadline(timeout_ms);
    while (!deadline.passed()) {
      std::string m = Receive(static_cast<int>(std::max<int64_t>(1, deadline.left_ms())));
      if (m.find(text) != std::string::npos) return m;
    }
    return "";
  }

  // Counts watchdog pings over `ms`.
  int PingsWithin(int ms) {
    int pings = 0;
    const RealDeadline deadline(ms);
    while (!deadline.passed()) {
      if (Receive(static_cast<int>(std::max<int64_t>(1, deadline.left_ms()))).find("WATCHDOG=1") !=
          std::string::npos) {
        ++pings;
      }
    }
    return pings;
  }

  // Waits for `n` watchdog pings (at most `timeout_ms`); returns how many came.
  int WaitForPings(int n, int timeout_ms) {
    int pings = 0;
    const RealDeadline deadline(timeout_ms);
    while (pings < n && !deadline.passed()) {
      if (Receive(static_cast<int>(std::max<int64_t>(1, deadline.left_ms()))).find("WATCHDOG=1") !=
          std::string::npos) {
        ++pings;
      }
    }
    return pings;
  }

  void Drain() {
    while (!Receive(0).empty()) {
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

// Sets the notify environment for the daemons started in its lifetime only.
class NotifyEnvironment {
 public:
  explicit NotifyEnvironment(const std::string& socket) {
    setenv("NOTIFY_SOCKET", socket.c_str(), 1);
    setenv("WATCHDOG_USEC", std::to_string(kWatchdogMs * 1000).c_str(), 1);
  }
  ~NotifyEnvironment() {
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
  }
};

// What a daemon must show systemd: ready with a status, pings at half the watchdog interval,
// none while it is stopped, and pings again once it runs.
void ExpectReady(FakeNotifySocket& notify) {
  const std::string ready = notify.WaitFor("READY=1", 20000);
  ASSERT_NE(ready, "");
  EXPECT_NE(ready.find("STATUS="), std::string::npos) << ready;
}

// Whether every thread of `pid` has stopped (SIGSTOP), waiting for it at most `timeout_ms`.
bool WaitStopped(pid_t pid, int timeout_ms) {
  const RealDeadline deadline(timeout_ms);
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  while (!deadline.passed()) {
    bool all = true;
    std::error_code ec;
    for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
      std::ifstream stat(t.path() / "stat");
      std::string line;
      std::getline(stat, line);
      const size_t paren = line.rfind(')');
      if (paren == std::string::npos || line.size() < paren + 3 || line[paren + 2] != 'T') {
        all = false;
      }
    }
    if (all && !ec) return true;
    SleepRealMs(1);
  }
  return false;
}

void ExpectWatchdogFollowsTheLoop(FakeNotifySocket& notify, pid_t pid) {
  // Pings every 100 ms: they come, however busy the machine (no count per second is asked).
  EXPECT_EQ(notify.WaitForPings(3, 30000), 3);

  ASSERT_EQ(kill(pid, SIGSTOP), 0);
  ASSERT_TRUE(WaitStopped(pid, 30000));
  notify.Drain();  // sent before every thread had stopped; nothing can be sent after
  EXPECT_EQ(notify.PingsWithin(5 * kWatchdogMs), 0) << "pings while the daemon is stopped";
  ASSERT_EQ(kill(pid, SIGCONT), 0);
  EXPECT_NE(notify.WaitFor("WATCHDOG=1", 30000), "") << "no pings after SIGCONT";
}

TEST(ServiceNotifyTest, TheMasterIsReadyAndFeedsTheWatchdogOnlyWhileItsLoopRuns) {
  TestCluster cluster;
  FakeNotifySocket notify(cluster.dir() + "/notify.sock");
  ASSERT_TRUE(notify.bound());
  {
    NotifyEnvironment env(cluster.dir() + "/notify.sock");
    cluster.StartMaster();
  }
  ExpectReady(notify);
  ExpectWatchdogFollowsTheLoop(notify, cluster.master_pid());
  cluster.StopMaster();
  EXPECT_NE(notify.WaitFor("STOPPING=1", 5000), "");
}

TEST(ServiceNotifyTest, TheAgentIsReadyAndFeedsTheWatchdogOnlyWhileItsLoopRuns) {
  TestCluster cluster;
  cluster.StartMaster();
  FakeNotifySocket notify(cluster.dir() + "/notify.sock");
  ASSERT_TRUE(notify.bound());
  {
    NotifyEnvironment env(cluster.dir() + "/notify.sock");
    cluster.StartAgent("node1", SmallBoards());
  }
  ExpectReady(notify);
  EXPECT_NE(notify.WaitFor("STATUS=0 tasks running; registered with the master", 15000), "");
  ExpectWatchdogFollowsTheLoop(notify, cluster.agent_pid("node1"));
}

}  // namespace
}  // namespace snn::testing
