#include "master/job_table.h"

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
  ASSERT_EQ(jobs.pending().at("default").size(), 1u);
  jobs.SetState(job, v1::RUNNING, 1000, "started");
  EXPECT_TRUE(jobs.pending().empty());
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

}  // namespace
}  // namespace snn
