// The device filter of cgroup v2 (an eBPF program on the task's cgroup), on this host's own
// cgroup v2 hierarchy: a process in the cgroup cannot open a denied device node, by its number,
// and opens the others; a second program replaces the first without a moment unconfined.
// (The v1 devices controller is exercised by tests/integration/device_isolation_test.cc.)
#include "nodeagent/tasks/device_filter.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

namespace snn {
namespace {

TEST(DeviceFilterTest, DeviceAtGivesTheNodesNumberAndSaysWhatIsNotOne) {
  auto full = DeviceAt("/dev/full");
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(*full, (DeviceNumber{false, 1, 7}));
  EXPECT_EQ(DeviceRule(*full), "c 1:7");
  EXPECT_EQ(DeviceAt("/no/such/device").status().code(), Code::kNotFound);
  EXPECT_EQ(DeviceAt("/etc/hostname").status().code(), Code::kInvalidArgument);
}

// Where cgroup v2 is mounted ("" if nowhere).
std::string CgroupV2Mount() {
  std::ifstream mounts("/proc/mounts");
  std::string line;
  while (std::getline(mounts, line)) {
    std::istringstream in(line);
    std::string source, dir, type;
    in >> source >> dir >> type;
    if (type == "cgroup2") return dir;
  }
  return "";
}

// In a child moved into `cgroup`: 1 bit per path that opened (in order).
int OpensIn(const std::string& cgroup, const std::vector<std::string>& paths) {
  const pid_t child = fork();
  if (child == 0) {
    std::ofstream(cgroup + "/cgroup.procs") << getpid() << std::flush;
    int opened = 0;
    for (size_t i = 0; i < paths.size(); ++i) {
      const int fd = open(paths[i].c_str(), O_RDONLY);
      if (fd >= 0) {
        opened |= 1 << i;
        close(fd);
      }
    }
    _exit(opened);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DeviceFilterTest, AProcessInTheCgroupCannotOpenADeniedDevice) {
  const std::string root = CgroupV2Mount();
  if (geteuid() != 0 || root.empty()) GTEST_SKIP() << "needs root and a cgroup v2 mount";
  const std::string cgroup = root + "/snn-device-filter-test-" + std::to_string(getpid());
  ASSERT_EQ(mkdir(cgroup.c_str(), 0755), 0) << cgroup << ": " << strerror(errno);
  auto first = LoadDeviceDenyProgram({{false, 1, 7}});
  if (!first.ok()) {
    rmdir(cgroup.c_str());
    GTEST_SKIP() << first.status().message();
  }
  ASSERT_TRUE(AttachDeviceProgram(cgroup, *first, -1).ok());
  const std::vector<std::string> paths = {"/dev/full", "/dev/zero", "/dev/null"};
  EXPECT_EQ(OpensIn(cgroup, paths), 0b110);  // /dev/full refused
  // Replaced: /dev/zero refused, /dev/full open again.
  auto second = LoadDeviceDenyProgram({{false, 1, 5}, {true, 7, 0}});
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(AttachDeviceProgram(cgroup, *second, *first).ok());
  EXPECT_EQ(OpensIn(cgroup, paths), 0b101);
  // With no device: everything opens.
  auto none = LoadDeviceDenyProgram({});
  ASSERT_TRUE(none.ok());
  ASSERT_TRUE(AttachDeviceProgram(cgroup, *none, *second).ok());
  EXPECT_EQ(OpensIn(cgroup, paths), 0b111);
  for (int fd : {*first, *second, *none}) close(fd);
  EXPECT_EQ(rmdir(cgroup.c_str()), 0) << strerror(errno);
}

}  // namespace
}  // namespace snn
