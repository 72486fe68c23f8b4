// A real master and two real agents: jobs run with the SNN_* environment, and every way a job
// ends (exit 0, non-zero exit, time limit, cancel) gives the right state with no process left.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nodeagent/tasks/launcher.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

std::map<std::string, std::string> ReadEnvFile(const std::string& path) {
  std::map<std::string, std::string> env;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

class LifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    cluster_.StartAgent("node1", SmallBoards(2, 4, 1000, 4));
    cluster_.StartAgent("node2", SmallBoards(1, 8, 4000, 8));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; }));
  }

  // The task's process group, once the agent has reported it running.
  pid_t RunningPgid(uint64_t id) {
    pid_t pgid = 0;
    EXPECT_TRUE(TestCluster::WaitUntil([&] {
      auto job = cluster_.Show(id);
      if (!job.ok() || job->tasks_size() == 0) return false;
      pgid = static_cast<pid_t>(job->tasks(0).pid());
      return job->tasks(0).state() == v1::TASK_RUNNING && pgid > 0;
    }));
    return pgid;
  }

  TestCluster cluster_;
};

TEST_F(LifecycleTest, TasksGetTheSnnEnvironment) {
  const std::string out = cluster_.dir() + "/env.out";
  auto spec = ShellJob("env | grep ^SNN_ > " + out, /*cores=*/6);
  spec.mutable_task()->mutable_resources()->set_ksps(250);
  spec.mutable_task()->mutable_resources()->set_streams(2);
  auto sub = cluster_.Submit(spec);
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  EXPECT_EQ(sub->tenant_job_id(), 1u);
  ASSERT_TRUE(cluster_.WaitForState(1, v1::COMPLETED));
  auto job = cluster_.Show(1);
  ASSERT_TRUE(job.ok());
  auto env = ReadEnvFile(out);
  EXPECT_EQ(env["SNN_JOB_ID"], "1");
  EXPECT_EQ(env["SNN_GLOBAL_JOB_ID"], std::to_string(sub->job_id()));
  EXPECT_EQ(env["SNN_TENANT"], "alice");
  EXPECT_EQ(env["SNN_TASK_ID"], "0");
  EXPECT_EQ(env["SNN_MAX_KSPS"], "250");
  EXPECT_EQ(env["SNN_NODE"], job->tasks(0).node());
  EXPECT_EQ(env["SNN_BOARD"], std::to_string(job->tasks(0).board()));
  EXPECT_EQ(env["SNN_ROUTER_CHANNEL"], "0,1");
  EXPECT_EQ(env["SNN_PULSE_INPUT_QUEUE_ID"], "0");
  EXPECT_EQ(env["SNN_NUM_CORES"], "6");
  // Six distinct "x,y" cores, matching the mapping the master recorded.
  std::string cores;
  for (const auto& c : job->tasks(0).mapping().cores()) {
    cores += (cores.empty() ? "" : ";") + std::to_string(c.x()) + "," + std::to_string(c.y());
  }
  EXPECT_EQ(env["SNN_CORES"], cores);
  EXPECT_EQ(job->tasks(0).mapping().cores_size(), 6);
}

TEST_F(LifecycleTest, ExitCodesDecideCompletedOrFailed) {
  ASSERT_TRUE(cluster_.Submit(ShellJob("exit 0")).ok());
  ASSERT_TRUE(cluster_.Submit(ShellJob("echo oops >&2; exit 7")).ok());
  ASSERT_TRUE(cluster_.WaitForState(1, v1::COMPLETED));
  ASSERT_TRUE(cluster_.WaitForState(2, v1::FAILED));
  auto failed = cluster_.Show(2);
  EXPECT_EQ(failed->exit_code(), 7);
  EXPECT_NE(failed->reason().find("exited with code 7"), std::string::npos) << failed->reason();
  std::ifstream err(failed->tasks(0).stderr_path());
  std::string line;
  std::getline(err, line);
  EXPECT_EQ(line, "oops");
  // Every transition is recorded with its reason.
  ASSERT_EQ(failed->history_size(), 3);
  EXPECT_EQ(failed->history(2).to(), v1::FAILED);
  EXPECT_GT(failed->history(2).time_ms(), 0);
}

TEST_F(LifecycleTest, TimeLimitEndsTheJobAndItsWholeProcessGroup) {
  ASSERT_TRUE(cluster_.Submit(ShellJob("sleep 600 & sleep 600", 1, /*time_limit_s=*/1)).ok());
  const pid_t pgid = RunningPgid(1);
  ASSERT_GT(pgid, 0);
  EXPECT_TRUE(GroupExists(pgid));
  ASSERT_TRUE(cluster_.WaitForState(1, v1::TIMEOUT));
  EXPECT_FALSE(GroupExists(pgid)) << "processes of a timed-out job survived";
  auto job = cluster_.Show(1);
  EXPECT_NE(job->reason().find("time limit"), std::string::npos);
  EXPECT_EQ(job->tasks(0).state(), v1::TASK_TIMED_OUT);
}

TEST_F(LifecycleTest, CancelEndsARunningJobAndItsWholeProcessGroup) {
  ASSERT_TRUE(cluster_.Submit(ShellJob("sleep 600 & sleep 600")).ok());
  const pid_t pgid = RunningPgid(1);
  ASSERT_GT(pgid, 0);
  auto run = cluster_.Snnctl({"cancel", "1"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "Cancelled job 1\n");
  ASSERT_TRUE(cluster_.WaitForState(1, v1::CANCELLED));
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster_.Show(1);
    return job.ok() && job->tasks(0).state() == v1::TASK_KILLED;
  }));
  EXPECT_FALSE(GroupExists(pgid)) << "processes of a cancelled job survived";
  // The board is free again: the pool shows nothing in use.
  auto pool = cluster_.Pool();
  for (const auto& n : pool->nodes()) {
    for (const auto& b : n.boards()) EXPECT_EQ(b.cores_used(), 0u);
  }
}

TEST_F(LifecycleTest, TenantsHaveTheirOwnJobIds) {
  auto a = cluster_.Submit(ShellJob("true"), "alice");
  auto b = cluster_.Submit(ShellJob("true"), "bob");
  auto a2 = cluster_.Submit(ShellJob("true"), "alice");
  ASSERT_TRUE(a.ok() && b.ok() && a2.ok());
  EXPECT_EQ(a->tenant_job_id(), 1u);
  EXPECT_EQ(b->tenant_job_id(), 1u);
  EXPECT_EQ(a2->tenant_job_id(), 2u);
  EXPECT_NE(a->job_id(), b->job_id());
  auto bobs = cluster_.Show(1, "bob");
  ASSERT_TRUE(bobs.ok());
  EXPECT_EQ(bobs->id(), b->job_id());
}

TEST_F(LifecycleTest, ListingsArePagedAndSnnctlGetsEveryPage) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(cluster_.Submit(ShellJob("true")).ok());
  v1::ListJobsRequest req;
  req.set_limit(2);
  auto first = cluster_.Client()->Call(rpc::kJobList, req);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->jobs_size(), 2);
  EXPECT_TRUE(first->more());
  req.set_after_id(first->jobs(1).id());
  req.set_limit(10);
  auto rest = cluster_.Client()->Call(rpc::kJobList, req);
  ASSERT_EQ(rest->jobs_size(), 3);
  EXPECT_FALSE(rest->more());
  EXPECT_EQ(rest->jobs(0).tenant_job_id(), 3u);
  auto jobs = cluster_.Snnctl({"jobs", "--page-size", "2"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_EQ(std::count(jobs.out.begin(), jobs.out.end(), '\n'), 6) << jobs.out;  // header + 5
}

TEST_F(LifecycleTest, SnnctlShowsJobsAndPool) {
  ASSERT_TRUE(cluster_.Submit(ShellJob("exit 0")).ok());
  ASSERT_TRUE(cluster_.WaitForState(1, v1::COMPLETED));
  auto jobs = cluster_.Snnctl({"jobs"});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_NE(jobs.out.find("COMPLETED"), std::string::npos) << jobs.out;
  auto pool = cluster_.RunSnnctl({"--master", cluster_.master_address(), "pool", "status"});
  EXPECT_EQ(pool.exit_code, 0) << pool.err;
  EXPECT_NE(pool.out.find("node1"), std::string::npos);
  EXPECT_NE(pool.out.find("COMPLETED 1"), std::string::npos) << pool.out;
  auto json = cluster_.Snnctl({"jobs", "-o", "json"});
  EXPECT_NE(json.out.find("\"state\": \"COMPLETED\""), std::string::npos) << json.out;
}

TEST_F(LifecycleTest, FinishedJobsAreListedShownAndFilteredFromTheArchiveAfterARestart) {
  for (const char* command : {"exit 0", "exit 0", "exit 3"}) {
    ASSERT_TRUE(cluster_.Submit(ShellJob(command)).ok());
  }
  ASSERT_TRUE(cluster_.Submit(ShellJob("exit 0"), "bob").ok());
  ASSERT_TRUE(cluster_.WaitForState(3, v1::FAILED));
  ASSERT_TRUE(cluster_.WaitForState(2, v1::COMPLETED));
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto bobs = cluster_.Show(1, "bob");
    return bobs.ok() && bobs->state() == v1::COMPLETED;
  }));
  cluster_.StopMaster();
  cluster_.StartMaster();

  auto shown = cluster_.Snnctl({"show", "3"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("FAILED"), std::string::npos) << shown.out;
  auto failed = cluster_.Snnctl({"jobs", "--state", "FAILED", "-o", "json"});
  ASSERT_EQ(failed.exit_code, 0) << failed.err;
  EXPECT_NE(failed.out.find("\"tenant_job_id\": \"3\""), std::string::npos) << failed.out;
  EXPECT_EQ(failed.out.find("\"tenant_job_id\": \"1\""), std::string::npos) << failed.out;
  auto all = cluster_.Snnctl({"jobs", "--all-tenants"});
  EXPECT_EQ(std::count(all.out.begin(), all.out.end(), '\n'), 5) << all.out;  // header + 4
  auto nobody = cluster_.Snnctl({"jobs", "--all-tenants", "--user", "nobody-at-all"});
  EXPECT_EQ(std::count(nobody.out.begin(), nobody.out.end(), '\n'), 1) << nobody.out;
  auto before = cluster_.Snnctl({"jobs", "--all-tenants", "--until", "2000-01-01"});
  EXPECT_EQ(std::count(before.out.begin(), before.out.end(), '\n'), 1) << before.out;
  auto cancel = cluster_.Snnctl({"cancel", "1"});
  EXPECT_NE(cancel.exit_code, 0);
  EXPECT_NE(cancel.err.find("has already ended (COMPLETED)"), std::string::npos) << cancel.err;
  // Ids go on from the archived ones, and the totals count them.
  auto next = cluster_.Submit(ShellJob("exit 0"));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->tenant_job_id(), 4u);
  auto pool = cluster_.Pool();
  ASSERT_TRUE(pool.ok());
  uint64_t failed_count = 0;
  for (const auto& c : pool->job_counts()) {
    if (c.state() == v1::FAILED) failed_count = c.count();
  }
  EXPECT_EQ(failed_count, 1u);
}

}  // namespace
}  // namespace snn::testing
