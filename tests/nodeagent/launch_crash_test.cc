// An agent killed in the middle of a launch (the chaos run under load found it: a task ran on
// beside its requeued copy, on cores the restarted agent handed out again). The agent is a
// forked child that dies at the moment it saves the task's record, or just after; the test then
// checks that the command never ran and that a new agent on the same data dir knows everything
// that exists. Before the fix the command started before its record was saved.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/base/clock.h"
#include "nodeagent/hal/sim_board.h"
#include "nodeagent/tasks/launcher.h"
#include "nodeagent/tasks/task_manager.h"
#include "nodeagent/tasks/task_records.h"
#include "tests/nodeagent/task_manager_fixture.h"

namespace snn {
namespace {

// Saves (or not), tells the test the task's pid, and dies as a SIGKILLed agent would: no
// destructors, every descriptor closed by the kernel.
class DyingRecords : public FileTaskRecords {
 public:
  DyingRecords(int report_fd, bool save_first) : report_fd_(report_fd), save_first_(save_first) {}
  Status Save(const std::string& file, const v1::AgentTaskRecord& record) override {
    if (save_first_) (void)FileTaskRecords::Save(file, record);
    const uint32_t pid = record.pid();
    (void)!write(report_fd_, &pid, sizeof pid);
    _exit(0);
  }

 private:
  int report_fd_;
  bool save_first_;
};

class LaunchCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = std::filesystem::temp_directory_path() / "snn_crash_XXXXXX";
    dir_ = mkdtemp(dir.data());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<TaskManager> NewAgent(std::unique_ptr<TaskRecords> records) {
    return std::make_unique<TaskManager>(clock_, testing::OneSimBoard(),
                                         testing::AgentOptions(dir_), nullptr, std::move(records));
  }

  v1::LaunchRequest Request() {
    v1::LaunchRequest req;
    req.set_job_id(5);
    req.set_attempt(2);
    req.mutable_task()->set_command("/bin/sh");
    req.mutable_task()->add_args("-c");
    req.mutable_task()->add_args("touch " + Ran() + "; sleep 60");
    auto* r = req.mutable_task()->mutable_resources();
    r->set_cores(16);  // the whole board
    r->set_ksps(10);
    r->set_streams(1);
    return req;
  }
  std::string Ran() const { return dir_ + "/ran"; }

  // Runs an agent in a child that dies while it saves the task's record; returns the pid of
  // the task's shepherd, which the dead agent left behind.
  pid_t LaunchInADyingAgent(bool save_first) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    const pid_t agent = fork();
    if (agent == 0) {
      close(fds[0]);
      auto tasks = NewAgent(std::make_unique<DyingRecords>(fds[1], save_first));
      (void)tasks->Launch(Request());
      _exit(3);  // not reached: the agent dies in Save
    }
    close(fds[1]);
    uint32_t pid = 0;
    EXPECT_EQ(read(fds[0], &pid, sizeof pid), ssize_t(sizeof pid));
    close(fds[0]);
    int status = 0;
    EXPECT_EQ(waitpid(agent, &status, 0), agent);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the agent did not die in Save";
    return static_cast<pid_t>(pid);
  }

  // Waits (on the condition, up to 10 s) for the orphaned shepherd to be gone.
  bool Gone(pid_t pid) {
    const snn::RealDeadline deadline(10000);
    while (!deadline.passed()) {
      waitpid(pid, nullptr, WNOHANG);  // ours to reap if this process is a subreaper
      if (!ProcessAlive(pid)) return true;
      snn::SleepRealMs(5);
    }
    return false;
  }

  ManualClock clock_;
  std::string dir_;
};

TEST_F(LaunchCrashTest, AnAgentThatDiesBeforeSavingTheRecordLeavesNothingRunning) {
  const pid_t shepherd = LaunchInADyingAgent(/*save_first=*/false);
  ASSERT_GT(shepherd, 1);
  const bool gone = Gone(shepherd);
  if (!gone) kill(-shepherd, SIGKILL);
  ASSERT_TRUE(gone) << "the task runs on, and no agent knows it";
  EXPECT_FALSE(std::filesystem::exists(Ran())) << "the command ran";

  auto next = NewAgent(nullptr);
  next->Recover();
  EXPECT_TRUE(next->Snapshot().empty());
  // Its cores are free: the next attempt gets the whole board.
  v1::LaunchRequest again = Request();
  again.set_attempt(3);
  again.mutable_task()->set_args(1, "exit 0");
  auto status = next->Launch(again);
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(status->state(), v1::TASK_RUNNING);
  next->KillAll();
  const snn::RealDeadline deadline(10000);
  while (next->active_count() > 0 && !deadline.passed()) {
    next->Poll();  // reaps its own child
    snn::SleepRealMs(5);
  }
  EXPECT_EQ(next->active_count(), 0u);
}

TEST_F(LaunchCrashTest, AnAgentThatDiesAfterSavingTheRecordLeavesATaskReportedUnstarted) {
  const pid_t shepherd = LaunchInADyingAgent(/*save_first=*/true);
  ASSERT_GT(shepherd, 1);
  auto next = NewAgent(nullptr);
  next->Recover();
  ASSERT_EQ(next->Snapshot().size(), 1u) << "the record was saved: the next agent knows it";
  const bool gone = Gone(shepherd);
  if (!gone) kill(-shepherd, SIGKILL);
  ASSERT_TRUE(gone) << "the task runs on";
  EXPECT_FALSE(std::filesystem::exists(Ran())) << "the command ran";
  next->Poll();
  auto ended = next->EndedUnacknowledged();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].state(), v1::TASK_LOST);  // the master requeues it
  EXPECT_EQ(ended[0].detail(), "the agent stopped before the task could start");
}

}  // namespace
}  // namespace snn
