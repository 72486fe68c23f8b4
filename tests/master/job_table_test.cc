#include "master/jobs/job_table.h"

#include <gtest/gtest.h>

#include "tests/master/test_jobs.h"

namespace snn {
namespace {

using testing_helpers::PendingJob;

TEST(JobTableTest, TenantIdsCountFromOnePerTenant) {
  JobTable jobs;
  EXPECT_EQ(jobs.NextTenantJobId("alice"), 1u);
  EXPECT_EQ(jobs.NextTenantJobId("alice"), 2u);
  EXPECT_EQ(jobs.NextTenantJobId("bob"), 1u);
}

TEST(JobTableTest, RestoreContinuesTheCounters) {
  JobTable jobs;
  v1::JobRecord job;
  job.set_id(41);
  job.set_tenant("alice");
  job.set_tenant_job_id(7);
  job.set_state(v1::COMPLETED);
  jobs.Restore(job);
  EXPECT_EQ(jobs.NextJobId(), 42u);
  EXPECT_EQ(jobs.NextTenantJobId("alice"), 8u);
  EXPECT_EQ(jobs.NextTenantJobId("bob"), 1u);
  EXPECT_EQ(jobs.FindByTenant("alice", 7)->id(), 41u);
}

TEST(JobTableTest, SetStateRecordsHistoryAndKeepsIndexes) {
  JobTable jobs;
  v1::JobRecord& job = jobs.Insert(PendingJob(jobs, "default", 1));
  ASSERT_EQ(jobs.views().pending().size(), 1u);
  EXPECT_EQ(jobs.views().PendingOf(job.id())->id, job.id());
  jobs.SetState(job, v1::RUNNING, 1000, "started");
  EXPECT_TRUE(jobs.views().pending().empty());
  EXPECT_EQ(jobs.views().PendingOf(job.id()), nullptr);
  EXPECT_EQ(jobs.CountInState(v1::RUNNING), 1u);
  EXPECT_EQ(job.start_ms(), 1000);
  jobs.SetState(job, v1::COMPLETED, 2000, "done");
  EXPECT_EQ(job.end_ms(), 2000);
  ASSERT_EQ(job.history_size(), 2);
  EXPECT_EQ(job.history(1).from(), v1::RUNNING);
  EXPECT_EQ(job.history(1).to(), v1::COMPLETED);
  EXPECT_EQ(job.history(1).reason(), "done");
  EXPECT_EQ(jobs.CountInState(v1::RUNNING), 0u);
}

TEST(JobTableTest, ANewJobIsPendingAndItsTasksAreAddedLaunchingInTheCurrentAttempt) {
  JobTable jobs;
  v1::JobRecord record = PendingJob(jobs, "default", 1);
  record.clear_state();
  v1::JobRecord& job = jobs.Insert(std::move(record));
  EXPECT_EQ(job.state(), v1::PENDING);
  EXPECT_EQ(jobs.submitted().OfUser(job.spec().user()), 1u);
  EXPECT_EQ(jobs.submitted().OfTenant(job.tenant()), 1u);
  job.set_attempt(3);
  jobs.AddTask(job);
  v1::TaskRecord& second = jobs.AddTask(job);
  EXPECT_EQ(second.index(), 1u);
  EXPECT_EQ(second.attempt(), 3u);
  EXPECT_EQ(second.state(), v1::TASK_LAUNCHING);
  jobs.SetTaskState(second, v1::TASK_RUNNING);
  EXPECT_EQ(job.tasks(1).state(), v1::TASK_RUNNING);
  jobs.SetState(job, v1::CANCELLED, 10, "cancelled");
  EXPECT_EQ(jobs.submitted().OfUser(job.spec().user()), 0u);
}

TEST(JobTableTest, PendingJobsStayFindableAsOthersLeaveTheFlatIndex) {
  JobTable jobs;
  std::vector<uint64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(jobs.Insert(PendingJob(jobs, "default", 1 + i)).id());
  // Leaving from the middle and the front moves others in the flat array.
  jobs.SetState(*jobs.Find(ids[1]), v1::CANCELLED, 10, "cancelled");
  jobs.SetState(*jobs.Find(ids[0]), v1::RUNNING, 10, "started");
  ASSERT_EQ(jobs.views().pending().size(), 3u);
  for (int i : {2, 3, 4}) {
    const snn::PendingJob* p = jobs.views().PendingOf(ids[i]);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->id, ids[i]);
    EXPECT_EQ(p->cores, uint32_t(1 + i));
    EXPECT_EQ(*p->tenant, "t");
    EXPECT_EQ(*p->pool, "default");
    ASSERT_NE(jobs.views().FactorsOf(ids[i]), nullptr);
  }
  EXPECT_EQ(jobs.views().PendingOf(ids[0]), nullptr);
  EXPECT_EQ(jobs.views().PendingOf(ids[1]), nullptr);
}

TEST(JobTableTest, TheRunningJobsUseIsKeptAsTheyStartChangeAndEnd) {
  JobTable jobs;
  auto use = [&](const char* tenant) {
    return const_cast<QuotaUse&>(jobs.views().use()).Tenant(tenant, "default");
  };
  v1::JobRecord& a = jobs.Insert(PendingJob(jobs, "default", 4, 0, /*replicas=*/2));
  v1::JobRecord& b = jobs.Insert(PendingJob(jobs, "default", 3));
  EXPECT_EQ(use("t"), 0u);  // pending jobs hold nothing
  jobs.SetState(a, v1::RUNNING, 10, "started");
  jobs.SetState(b, v1::RUNNING, 10, "started");
  EXPECT_EQ(use("t"), 2 * 4 + 3u);
  // One of a's two tasks ends: it holds one replica now.
  for (int i = 0; i < 2; ++i) {
    auto* t = a.add_tasks();
    t->set_index(i);
    t->set_node("n");
    t->set_state(i == 0 ? v1::TASK_RUNNING : v1::TASK_EXITED);
  }
  jobs.TasksChanged(a, 20);
  EXPECT_EQ(use("t"), 4 + 3u);
  jobs.SetState(a, v1::COMPLETED, 30, "done");
  EXPECT_EQ(use("t"), 3u);
  jobs.SetState(b, v1::PENDING, 30, "requeued");
  EXPECT_EQ(use("t"), 0u);
  EXPECT_EQ(use("other"), 0u);
}

TEST(JobTableTest, JobsWithActiveTasksAreIndexedByNodeWhateverTheJobsState) {
  JobTable jobs;
  v1::JobRecord& a = jobs.Insert(PendingJob(jobs, "default", 1, 0, 2));
  v1::JobRecord& b = jobs.Insert(PendingJob(jobs, "default", 1));
  auto add_task = [](v1::JobRecord& job, const std::string& node) {
    auto* t = job.add_tasks();
    t->set_index(job.tasks_size() - 1);
    t->set_node(node);
    t->set_state(v1::TASK_LAUNCHING);
    return t;
  };
  add_task(a, "n1");
  add_task(a, "n2");
  jobs.SetState(a, v1::RUNNING, 10, "started");
  add_task(b, "n1");
  jobs.SetState(b, v1::RUNNING, 10, "started");
  EXPECT_EQ(jobs.JobsActiveOn("n1"), (std::set<uint64_t>{a.id(), b.id()}));
  EXPECT_EQ(jobs.JobsActiveOn("n2"), (std::set<uint64_t>{a.id()}));
  EXPECT_TRUE(jobs.JobsActiveOn("n3").empty());
  // Cancelled, its task still runs until it is killed: still on n1.
  jobs.SetState(b, v1::CANCELLED, 20, "cancelled");
  EXPECT_EQ(jobs.JobsActiveOn("n1").count(b.id()), 1u);
  b.mutable_tasks(0)->set_state(v1::TASK_KILLED);
  jobs.TasksChanged(b, 30);
  EXPECT_EQ(jobs.JobsActiveOn("n1"), (std::set<uint64_t>{a.id()}));
  a.mutable_tasks(1)->set_state(v1::TASK_LOST);
  jobs.TasksChanged(a, 30);
  EXPECT_TRUE(jobs.JobsActiveOn("n2").empty());
  EXPECT_EQ(jobs.JobsActiveOn("n1"), (std::set<uint64_t>{a.id()}));
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

// Run-time predictions: the mean of the user's last two batch jobs that ran, at most the job's
// limit, at least 1 s; a job cancelled before it ran, a session and its steps say nothing.
TEST(JobTableTest, EachUsersLastRunTimesPredictTheirNextJobs) {
  JobTable jobs;
  auto run = [&](const std::string& user, int64_t start, int64_t end, v1::JobState how) {
    v1::JobRecord record = testing_helpers::PendingJob(jobs, "default", 1);
    record.mutable_spec()->set_user(user);
    v1::JobRecord& job = jobs.Insert(std::move(record));
    jobs.SetState(job, v1::RUNNING, start, "started");
    jobs.SetState(job, how, end, "ended");
  };
  EXPECT_EQ(jobs.RunTimesOf("alice"), nullptr);
  run("alice", 0, 60'000, v1::COMPLETED);
  ASSERT_NE(jobs.RunTimesOf("alice"), nullptr);
  EXPECT_EQ(jobs.RunTimesOf("alice")->Predict(3'600'000), 60'000);
  run("alice", 100'000, 400'000, v1::FAILED);  // ran 300 s
  EXPECT_EQ(jobs.RunTimesOf("alice")->Predict(3'600'000), 180'000);
  EXPECT_EQ(jobs.RunTimesOf("alice")->Predict(100'000), 100'000) << "never past the limit";
  run("alice", 500'000, 500'010, v1::COMPLETED);  // the oldest is forgotten
  EXPECT_EQ(jobs.RunTimesOf("alice")->Predict(3'600'000), 150'005);
  v1::JobRecord never = testing_helpers::PendingJob(jobs, "default", 1);
  never.mutable_spec()->set_user("bob");
  jobs.SetState(jobs.Insert(std::move(never)), v1::CANCELLED, 10, "cancelled");
  EXPECT_EQ(jobs.RunTimesOf("bob"), nullptr);
  // A session's steps and the session itself say nothing about the user's next job.
  for (v1::JobKind kind : {v1::STEP, v1::SESSION}) {
    v1::JobRecord record = testing_helpers::PendingJob(jobs, "default", 1);
    record.mutable_spec()->set_user("alice");
    record.mutable_spec()->set_kind(kind);
    v1::JobRecord& job = jobs.Insert(std::move(record));
    jobs.SetState(job, v1::RUNNING, 600'000, "started");
    jobs.SetState(job, v1::COMPLETED, 601'000, "ended");
  }
  EXPECT_EQ(jobs.RunTimesOf("alice")->Predict(3'600'000), 150'005);
  RuntimeHistory tiny;
  tiny.Record(10);
  EXPECT_EQ(tiny.Predict(60'000), 1000);
}

}  // namespace
}  // namespace snn
