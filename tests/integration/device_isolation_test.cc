// Device nodes of pass-through boards (a USB console or data path), with real daemons: three
// Ethernet boards, each with a device node (made by the test with the numbers of /dev/full,
// /dev/zero and /dev/random) that the boards file lists and snn-driver-ether hands to the task's
// user. A task opens its own board's node and none of the others', not even under another name
// (/dev/full is board 0's by number); a driver that hands over a node the boards file does not
// list fails the task, saying so; an agent whose boards file lists what is no device node does not
// start.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "snn_paths.h"
#include "tests/integration/emulated_boards.h"
#include "tests/test_util/process.h"

namespace snn::testing {
namespace {

// Device nodes in `dir` with the numbers of /dev/full, /dev/zero and /dev/random, open to all
// (as udev rules for development boards often make them). Empty without root.
std::vector<std::string> MakeDevices(const std::string& dir) {
  if (geteuid() != 0) return {};
  const std::vector<std::pair<int, int>> numbers = {{1, 7}, {1, 5}, {1, 8}};
  std::vector<std::string> paths;
  for (size_t i = 0; i < numbers.size(); ++i) {
    const std::string path = dir + "/board" + std::to_string(i) + "-usb";
    if (mknod(path.c_str(), S_IFCHR | 0666, makedev(numbers[i].first, numbers[i].second)) != 0 ||
        chmod(path.c_str(), 0666) != 0) {
      return {};
    }
    paths.push_back(path);
  }
  return paths;
}

class DeviceIsolationTest : public ::testing::Test {
 protected:
  void StartAgent(bool list_devices) {
    if (devices_.empty()) GTEST_SKIP() << "making device nodes needs root";
    ASSERT_TRUE(emulated_.started());
    cluster_.StartMaster();
    cluster_.StartAgent("node1", emulated_.AgentBoards("ether-v1", list_devices));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }

  // Runs `script` on a board; the job once it ended.
  v1::JobRecord Run(const std::string& script) {
    v1::JobSpec spec = ShellJob(script);
    spec.mutable_task()->mutable_resources()->set_board_type("ether-v1");
    auto submitted = cluster_.Submit(spec, "alice");
    EXPECT_TRUE(submitted.ok()) << submitted.status().ToString();
    if (!submitted.ok()) return {};
    const uint64_t id = submitted->tenant_job_id();
    EXPECT_TRUE(TestCluster::WaitUntil([&] {
      auto job = cluster_.Show(id, "alice");
      return job.ok() && (job->state() == v1::COMPLETED || job->state() == v1::FAILED);
    }));
    auto job = cluster_.Show(id, "alice");
    return job.ok() ? *job : v1::JobRecord();
  }

  TestCluster cluster_;
  std::vector<std::string> devices_ = MakeDevices(cluster_.dir());
  EmulatedBoards emulated_{cluster_.dir(), 3, "ether", devices_};
};

TEST_F(DeviceIsolationTest, ATaskOpensItsOwnBoardsDeviceNodeAndNoOtherBoards) {
  StartAgent(true);
  if (devices_.empty()) return;
  // Its board: the last number of its endpoint's address (127.0.0.2 is board 0).
  std::string script =
      "own=${SNN_BOARD_ENDPOINTS#udp://127.0.0.}; own=${own%%:*}; echo \"own=$((own - 2))\"\n";
  for (size_t i = 0; i < devices_.size(); ++i) {
    script += "if (: < " + devices_[i] + ") 2>/dev/null; then echo dev" + std::to_string(i) +
              "=open; else echo dev" + std::to_string(i) + "=refused; fi\n";
  }
  script += "if (: < /dev/full) 2>/dev/null; then echo full=open; else echo full=refused; fi\n";
  const v1::JobRecord job = Run(script);
  ASSERT_EQ(job.state(), v1::COMPLETED) << job.reason();
  const std::string out = cluster_.Snnctl({"logs", std::to_string(job.tenant_job_id())}).out;
  const size_t at = out.find("own=");
  ASSERT_NE(at, std::string::npos) << out;
  const int own = out[at + 4] - '0';
  ASSERT_TRUE(own >= 0 && own < 3) << out;
  for (int i = 0; i < 3; ++i) {
    const std::string want = "dev" + std::to_string(i) + (i == own ? "=open" : "=refused");
    EXPECT_NE(out.find(want), std::string::npos) << want << " in\n" << out;
  }
  // /dev/full has board 0's device number: refused unless board 0 is the task's.
  EXPECT_NE(out.find(own == 0 ? "full=open" : "full=refused"), std::string::npos) << out;
  // Released: the node is root's again.
  struct stat st {};
  ASSERT_EQ(stat(devices_[static_cast<size_t>(own)].c_str(), &st), 0);
  EXPECT_TRUE(TestCluster::WaitUntil([&] {
    return stat(devices_[static_cast<size_t>(own)].c_str(), &st) == 0 && st.st_uid == 0 &&
           (st.st_mode & 0777) == 0600;
  }));
}

// Issue 64: a task handed its board's open device to a process of another session (over a Unix
// socket), which read the board after the job ended. When the board is released, every process
// not run as root that still holds one of its device nodes is killed.
TEST_F(DeviceIsolationTest, AHoldOnABoardsDeviceEndsWithTheAllocation) {
  StartAgent(true);
  if (devices_.empty()) return;
  const std::string dir = cluster_.dir() + "/holder";
  mkdir(dir.c_str(), 0777);
  chmod(dir.c_str(), 0777);
  const std::string sock = dir + "/sock", held = dir + "/held";
  std::ofstream(dir + "/holder.py") << "import socket, time\n"
                                       "s = socket.socket(socket.AF_UNIX)\n"
                                       "s.bind('"
                                    << sock
                                    << "')\n"
                                       "s.listen(1)\n"
                                       "c, _ = s.accept()\n"
                                       "msg, fds, _, _ = socket.recv_fds(c, 100, 1)\n"
                                       "open('"
                                    << held
                                    << "', 'w').write('holding %d' % len(fds))\n"
                                       "while True:\n"
                                       "    time.sleep(1)\n";
  chmod((dir + "/holder.py").c_str(), 0644);
  // Another user's process outside every task (the receiving end a task's user could run).
  const pid_t holder = SpawnLogged(
      {"/usr/sbin/runuser", "-u", "daemon", "--", "/usr/bin/python3", dir + "/holder.py"},
      dir + "/holder.out", dir + "/holder.out");
  ASSERT_GT(holder, 0);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return access(sock.c_str(), F_OK) == 0; }))
      << ReadFile(dir + "/holder.out");
  chmod(sock.c_str(), 0777);
  std::string script =
      "own=${SNN_BOARD_ENDPOINTS#udp://127.0.0.}; own=${own%%:*}; own=$((own - 2))\n"
      "case $own in\n";
  for (size_t i = 0; i < devices_.size(); ++i) {
    script += "  " + std::to_string(i) + ") dev=" + devices_[i] + ";;\n";
  }
  script +=
      "esac\n/usr/bin/python3 -c \"import socket,os\n"
      "c = socket.socket(socket.AF_UNIX); c.connect('" +
      sock +
      "')\n"
      "fd = os.open('$dev', os.O_RDONLY)\n"
      "socket.send_fds(c, [b'x'], [fd])\n"
      "print('handed', '$dev')\"\n";
  const v1::JobRecord job = Run(script);
  ASSERT_EQ(job.state(), v1::COMPLETED) << job.reason();
  EXPECT_EQ(ReadFile(held), "holding 1") << ReadFile(dir + "/holder.out");
  // The job ended and its board was released: the holder is gone.
  int status = 0;
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return waitpid(holder, &status, WNOHANG) == holder; }))
      << "a process still holds the board's device after the job ended";
  if (waitpid(holder, &status, WNOHANG) == 0) {
    kill(holder, SIGKILL);
    waitpid(holder, &status, 0);
  }
}

TEST_F(DeviceIsolationTest, ADeviceTheBoardsFileDoesNotListFailsTheTask) {
  StartAgent(false);
  if (devices_.empty()) return;
  const v1::JobRecord job = Run("echo ran");
  EXPECT_EQ(job.state(), v1::FAILED);
  EXPECT_NE(job.reason().find("does not list under the board's devices"), std::string::npos)
      << job.reason();
}

TEST(DeviceListTest, AnAgentRefusesABoardsFileWhoseDeviceIsNoDeviceNode) {
  TestCluster cluster;
  const std::string file = cluster.dir() + "/boards.yaml";
  std::ofstream(file) << "boards:\n  - {type: x, mesh: 1x1, ksps: 10, streams: 1, driver: d, "
                         "board: a, devices: [/etc/hostname]}\ndrivers:\n  d: {command: "
                         "[/bin/true]}\n";
  // Bounded: an agent that took the file would run on (and be killed after a minute).
  const std::string command = "timeout 60 " + std::string(SNN_AGENT_BIN) +
                              " --boards_file=" + file + " --data_dir=" + cluster.dir() +
                              "/data --master=127.0.0.1:9 2>&1";
  FILE* p = popen(command.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << out;
  EXPECT_NE(out.find("boards[0].devices: /etc/hostname is not a device node"), std::string::npos)
      << out;
}

}  // namespace
}  // namespace snn::testing
