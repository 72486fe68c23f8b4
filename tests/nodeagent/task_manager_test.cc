// The agent's task manager with real processes and a manual clock: time limits and kill
// escalation happen when the test advances the clock, not after real delays.
#include "nodeagent/tasks/task_manager.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/base/clock.h"
#include "common/rpc/asio.h"
#include "nodeagent/hal/sim_board.h"
#include "nodeagent/tasks/launcher.h"
#include "tests/nodeagent/task_manager_fixture.h"

namespace snn {
namespace {

class TaskManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = std::filesystem::temp_directory_path() / "snn_tasks_XXXXXX";
    dir_ = mkdtemp(dir.data());
    TaskManagerOptions options = testing::AgentOptions(dir_);
    options.kill_grace_ms = 2000;
    options.base_env["SNN_STALE"] = "from the agent";
    tasks_ = std::make_unique<TaskManager>(clock_, testing::OneSimBoard(), options);
  }
  void TearDown() override {
    tasks_->KillAll();
    EXPECT_TRUE(PollUntil([&] { return Ended(); }));
    std::filesystem::remove_all(dir_);
  }

  v1::LaunchRequest Request(uint64_t job, const std::string& script, uint64_t limit_ms = 0) {
    v1::LaunchRequest req;
    req.set_job_id(job);
    req.set_tenant_job_id(job + 100);
    req.set_tenant("alice");
    req.set_attempt(1);
    req.set_time_limit_ms(limit_ms);
    req.mutable_task()->set_command("/bin/sh");
    req.mutable_task()->add_args("-c");
    req.mutable_task()->add_args(script);
    (*req.mutable_task()->mutable_env())["GREETING"] = "hi";
    auto* r = req.mutable_task()->mutable_resources();
    r->set_cores(3);
    r->set_ksps(150);
    r->set_streams(2);
    return req;
  }

  // Polls until `done` holds; real processes take real (short) time to exit.
  bool PollUntil(const std::function<bool()>& done) {
    const snn::RealDeadline deadline(10000);
    while (!deadline.passed()) {
      tasks_->Poll();
      if (done()) return true;
      snn::SleepRealMs(5);
    }
    return false;
  }

  bool Ended() { return tasks_->active_count() == 0; }

  std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  ManualClock clock_;
  std::string dir_;
  std::unique_ptr<TaskManager> tasks_;
};

TEST_F(TaskManagerTest, RunsWithTheSnnEnvironmentAndReportsExit) {
  auto status = tasks_->Launch(Request(7, "env | grep -E '^(SNN_|GREETING)' | sort; exit 0"));
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(status->state(), v1::TASK_RUNNING);
  EXPECT_EQ(status->mapping().cores_size(), 3);
  ASSERT_TRUE(PollUntil([&] { return Ended(); }));
  auto ended = tasks_->EndedUnacknowledged();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].state(), v1::TASK_EXITED);
  EXPECT_EQ(ended[0].exit_code(), 0);
  const std::string env = ReadFile(ended[0].stdout_path());
  EXPECT_NE(env.find("SNN_JOB_ID=107\n"), std::string::npos) << env;
  EXPECT_NE(env.find("SNN_GLOBAL_JOB_ID=7\n"), std::string::npos);
  EXPECT_NE(env.find("SNN_TASK_ID=0\n"), std::string::npos);
  EXPECT_NE(env.find("SNN_MAX_KSPS=150\n"), std::string::npos);
  EXPECT_NE(env.find("SNN_ROUTER_CHANNEL=0,1\n"), std::string::npos);
  EXPECT_NE(env.find("SNN_PULSE_INPUT_QUEUE_ID=0\n"), std::string::npos);
  EXPECT_NE(env.find("SNN_CORES=0,0;1,0;2,0\n"), std::string::npos);
  EXPECT_NE(env.find("SNN_NODE=n1\n"), std::string::npos);
  EXPECT_NE(env.find("GREETING=hi\n"), std::string::npos);
  EXPECT_EQ(env.find("SNN_STALE"), std::string::npos) << "agent's own SNN_* leaked";
  tasks_->Acknowledge({TaskKey{7, 0, 1}});
  EXPECT_TRUE(tasks_->EndedUnacknowledged().empty());
}

TEST_F(TaskManagerTest, TasksInheritNoDescriptorsOfTheAgent) {
  // An open socket of "the agent": the task must not get a copy of it.
  asio::io_context io;
  tcp::acceptor listening(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  auto status = tasks_->Launch(Request(11, "ls /proc/self/fd"));
  ASSERT_TRUE(status.ok());
  ASSERT_TRUE(PollUntil([&] { return Ended(); }));
  // ls itself opens one directory descriptor; beyond that only stdin, stdout and stderr.
  const std::string fds = ReadFile(tasks_->EndedUnacknowledged()[0].stdout_path());
  EXPECT_EQ(fds, "0\n1\n2\n3\n") << fds;
}

TEST_F(TaskManagerTest, NonZeroExitIsReported) {
  ASSERT_TRUE(tasks_->Launch(Request(1, "exit 5")).ok());
  ASSERT_TRUE(PollUntil([&] { return Ended(); }));
  EXPECT_EQ(tasks_->EndedUnacknowledged()[0].exit_code(), 5);
}

TEST_F(TaskManagerTest, TimeLimitFollowsTheInjectedClockAndKillsTheGroup) {
  auto status = tasks_->Launch(Request(2, "sleep 600 & sleep 600", /*limit_ms=*/60'000));
  ASSERT_TRUE(status.ok());
  const pid_t pgid = static_cast<pid_t>(status->pid());
  clock_.AdvanceMs(59'999);
  tasks_->Poll();
  EXPECT_EQ(tasks_->active_count(), 1u);
  EXPECT_TRUE(GroupExists(pgid));
  clock_.AdvanceMs(2);
  ASSERT_TRUE(PollUntil([&] { return Ended(); }));
  auto ended = tasks_->EndedUnacknowledged();
  EXPECT_EQ(ended[0].state(), v1::TASK_TIMED_OUT);
  EXPECT_FALSE(GroupExists(pgid)) << "a process of the group survived";
}

TEST_F(TaskManagerTest, KillEscalatesToSigkillAfterTheGrace) {
  const std::string trapped = dir_ + "/trapped";
  auto status = tasks_->Launch(
      Request(3, "trap '' TERM; touch " + trapped + "; sleep 600 & wait; sleep 600"));
  ASSERT_TRUE(status.ok());
  const pid_t pgid = static_cast<pid_t>(status->pid());
  // The shell says when its trap is in place; signalled before, it would just die.
  ASSERT_TRUE(PollUntil([&] { return std::filesystem::exists(trapped); }));
  tasks_->Kill(TaskKey{3, 0, 1}, "cancelled by alice");
  tasks_->Poll();
  EXPECT_EQ(tasks_->active_count(), 1u) << "the shell ignores SIGTERM";
  clock_.AdvanceMs(2001);
  ASSERT_TRUE(PollUntil([&] { return Ended(); }));
  auto ended = tasks_->EndedUnacknowledged();
  EXPECT_EQ(ended[0].state(), v1::TASK_KILLED);
  EXPECT_EQ(ended[0].detail(), "cancelled by alice");
  EXPECT_FALSE(GroupExists(pgid));
}

// The chaos run under load: the agent stopped a task for its lease (lost: the master requeues
// it), then died before it could report that; the next agent found only a task killed by
// signal 9, and the job FAILED. A stop's intent is in the record before any signal goes out.
TEST_F(TaskManagerTest, AStopIsReportedAsMeantByTheAgentThatReAttaches) {
  auto status = tasks_->Launch(Request(8, "sleep 600"));
  ASSERT_TRUE(status.ok());
  const pid_t pgid = static_cast<pid_t>(status->pid());
  tasks_->LoseAll("the agent heard nothing from the master for 2 s");
  ASSERT_TRUE(PollUntil([&] { return !ProcessAlive(pgid); }));
  // The agent dies here, before the end is reported; another starts on the same data dir.
  TaskManager next(clock_, testing::OneSimBoard(), testing::AgentOptions(dir_));
  next.Recover();
  // Its command may outlive its shepherd by a moment (a loaded host): the end comes once the
  // whole group is gone.
  const snn::RealDeadline deadline(10000);
  while (next.EndedUnacknowledged().empty() && !deadline.passed()) {
    next.Poll();
    snn::SleepRealMs(5);
  }
  auto ended = next.EndedUnacknowledged();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].state(), v1::TASK_LOST);
  EXPECT_EQ(ended[0].detail(), "the agent heard nothing from the master for 2 s");
  // The first agent "died" above: its task is the next one's. It must not wait in TearDown for
  // an end it may never see (the next agent's poll can reap the shepherd first).
  tasks_ =
      std::make_unique<TaskManager>(clock_, testing::OneSimBoard(), testing::AgentOptions(dir_));
}

// The shepherd looks the command up and enters the workdir as the task's user, so the launch
// answers RUNNING and the failure, with its reason, comes when the task ends.
TEST_F(TaskManagerTest, LaunchFailureSaysWhyAndHoldsNothing) {
  auto req = Request(4, "true");
  req.mutable_task()->set_command("no-such-command-anywhere");
  ASSERT_TRUE(tasks_->Launch(req).ok());
  auto bad_dir = Request(5, "true");
  bad_dir.mutable_task()->set_workdir("/no/such/dir");
  ASSERT_TRUE(tasks_->Launch(bad_dir).ok());
  ASSERT_TRUE(PollUntil([&] { return tasks_->EndedUnacknowledged().size() == 2; }));
  std::map<uint64_t, v1::TaskStatus> ended;
  for (const auto& t : tasks_->EndedUnacknowledged()) ended[t.job_id()] = t;
  EXPECT_EQ(ended[4].state(), v1::TASK_LAUNCH_FAILED);
  EXPECT_EQ(ended[4].detail().rfind("command 'no-such-command-anywhere' not found in PATH (", 0),
            0u)
      << ended[4].detail();
  EXPECT_EQ(ended[5].state(), v1::TASK_LAUNCH_FAILED);
  EXPECT_EQ(ended[5].detail(), "working directory '/no/such/dir' does not exist");
  // Every core is free again: a 16-core task fits.
  auto big = Request(6, "true");
  big.mutable_task()->mutable_resources()->set_cores(16);
  EXPECT_EQ(tasks_->Launch(big)->state(), v1::TASK_RUNNING);
}

// A command searched in PATH is reported as what it is: missing (not "Permission denied" because
// some directory of PATH cannot be searched), or found but not executable by the task's user.
TEST_F(TaskManagerTest, ACommandNotFoundOrNotExecutableIsNamedAsSuch) {
  const std::string locked = dir_ + "/locked-bin", plain = dir_ + "/plain-bin";
  std::filesystem::create_directories(locked);
  std::filesystem::create_directories(plain);
  std::ofstream(plain + "/tool") << "#!/bin/sh\necho hi\n";
  std::filesystem::permissions(plain + "/tool", std::filesystem::perms::owner_read);
  std::filesystem::permissions(locked, std::filesystem::perms::none);  // unsearchable
  const std::string path = locked + ":" + plain + ":/usr/bin:/bin";
  auto missing = Request(11, "true");
  missing.mutable_task()->set_command("no-such-command-anywhere");
  (*missing.mutable_task()->mutable_env())["PATH"] = path;
  auto plain_file = Request(12, "true");
  plain_file.mutable_task()->set_command("tool");
  (*plain_file.mutable_task()->mutable_env())["PATH"] = path;
  ASSERT_TRUE(tasks_->Launch(missing).ok());
  ASSERT_TRUE(tasks_->Launch(plain_file).ok());
  ASSERT_TRUE(PollUntil([&] { return tasks_->EndedUnacknowledged().size() == 2; }));
  std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
  std::map<uint64_t, v1::TaskStatus> ended;
  for (const auto& t : tasks_->EndedUnacknowledged()) ended[t.job_id()] = t;
  EXPECT_EQ(ended[11].detail(),
            "command 'no-such-command-anywhere' not found in PATH (" + path + ")");
  EXPECT_EQ(ended[12].detail(),
            "command 'tool' is " + plain + "/tool, which this user may not execute");
}

TEST_F(TaskManagerTest, LaunchIsIdempotentAndBoardsRefuseOvercommit) {
  auto first = tasks_->Launch(Request(8, "sleep 600"));
  auto again = tasks_->Launch(Request(8, "sleep 600"));
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first->pid(), again->pid());
  auto big = Request(9, "true");
  big.mutable_task()->mutable_resources()->set_cores(14);
  EXPECT_EQ(tasks_->Launch(big).status().code(), Code::kResourceExhausted);
}

// A session's steps come by the hundred a second: a step makes no checkpoint directory (it is
// never requeued or moved: it lives and ends with its session), and renewing the lease (at every
// answer from the master) touches the file in place instead of writing a new one.
TEST_F(TaskManagerTest, AStepHasNoCheckpointDirectoryAndTheLeaseIsRenewedInPlace) {
  tasks_.reset();
  TaskManagerOptions options = testing::AgentOptions(dir_);
  options.checkpoint_root = dir_ + "/checkpoints";
  tasks_ = std::make_unique<TaskManager>(clock_, testing::OneSimBoard(), options);
  auto inode = [](const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 ? st.st_ino : ino_t{0};
  };

  const std::string show = "env | grep SNN_CHECKPOINT_DIR; true";
  ASSERT_TRUE(tasks_->Launch(Request(1, show)).ok());
  v1::LaunchRequest step = Request(2, show);
  step.set_hint_only(true);
  v1::CoreRect* hint = step.mutable_hint();
  hint->set_x(0);
  hint->set_y(2);
  hint->set_width(3);
  hint->set_height(1);
  auto launched = tasks_->Launch(step);
  ASSERT_TRUE(launched.ok()) << launched.status().ToString();
  ASSERT_EQ(launched->state(), v1::TASK_RUNNING) << launched->detail();
  ASSERT_TRUE(PollUntil([&] { return Ended(); }));
  auto ended = tasks_->EndedUnacknowledged();
  ASSERT_EQ(ended.size(), 2u);
  std::sort(ended.begin(), ended.end(),
            [](const auto& a, const auto& b) { return a.job_id() < b.job_id(); });
  EXPECT_NE(ReadFile(ended[0].stdout_path()).find("SNN_CHECKPOINT_DIR="), std::string::npos)
      << "a batch task has one";
  EXPECT_EQ(ReadFile(ended[1].stdout_path()), "") << "a step has none";
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/checkpoints/alice.job102.task0"));

  tasks_->SetMasterTerms(60000, 0);
  tasks_->RenewLease();
  const ino_t lease = inode(dir_ + "/lease");
  ASSERT_NE(lease, ino_t{0});
  tasks_->RenewLease();
  EXPECT_EQ(inode(dir_ + "/lease"), lease) << "the lease is renewed in place";
}

}  // namespace
}  // namespace snn
