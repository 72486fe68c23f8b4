// The test harness's process starter: what a test starts dies with it, however it dies, and a
// program that cannot be run is reported.
#include "tests/test_util/process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "common/base/clock.h"

namespace snn::testing {
namespace {

// Gone, or a zombie nobody reaped yet (in a container, PID 1 may never reap it).
bool Gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

TEST(SpawnLoggedTest, WhatATestStartsDiesWhenTheTestIsKilled) {
  int pids[2];
  ASSERT_EQ(pipe(pids), 0);
  const pid_t test = fork();
  ASSERT_GE(test, 0);
  if (test == 0) {  // stands for a test process, killed while its daemon runs
    const pid_t daemon = SpawnLogged({"/bin/sleep", "600"}, "/dev/null", "/dev/null");
    (void)!write(pids[1], &daemon, sizeof daemon);
    pause();
    _exit(0);
  }
  close(pids[1]);
  pid_t daemon = -1;
  ASSERT_EQ(read(pids[0], &daemon, sizeof daemon), static_cast<ssize_t>(sizeof daemon));
  close(pids[0]);
  ASSERT_GT(daemon, 0);
  EXPECT_FALSE(Gone(daemon));
  kill(test, SIGKILL);
  waitpid(test, nullptr, 0);
  const snn::RealDeadline deadline(30000);
  while (!Gone(daemon) && !deadline.passed()) {
    snn::SleepRealMs(10);
  }
  const bool gone = Gone(daemon);
  if (!gone) kill(daemon, SIGKILL);  // leave nothing behind either way
  EXPECT_TRUE(gone) << "the daemon outlived the test that started it";
}

TEST(SpawnLoggedTest, AProgramThatCannotRunIsReported) {
  EXPECT_EQ(SpawnLogged({"/nonexistent/snn-daemon"}, "/dev/null", "/dev/null"), -1);
  const std::string dir = ::testing::TempDir();
  EXPECT_EQ(SpawnLogged({"/bin/true"}, dir + "/no/such/dir/out.log", "/dev/null"), -1);
  const pid_t ok = SpawnLogged({"/bin/true"}, "/dev/null", "/dev/null");
  ASSERT_GT(ok, 0);
  int status = -1;
  ASSERT_EQ(waitpid(ok, &status, 0), ok);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace snn::testing
