#include "master/billing/usage_report.h"

#include <gtest/gtest.h>

#include "master/billing/billing.h"

namespace snn {
namespace {

constexpr int64_t kHour = 3600 * 1000;

v1::UsageRecord Attempt(uint64_t job, const std::string& tenant, const std::string& user,
                        const std::string& pool, uint32_t cores, uint32_t ksps, int64_t submit,
                        int64_t start, int64_t end, const std::string& state = "TASK_EXITED") {
  v1::UsageRecord r;
  r.set_job_id(job);
  r.set_tenant(tenant);
  r.set_user(user);
  r.set_pool(pool);
  r.set_cores(cores);
  r.set_ksps(ksps);
  r.set_submit_ms(submit);
  r.set_start_ms(start);
  r.set_end_ms(end);
  r.set_state(state);
  return r;
}

TEST(UsageReportTest, OnlyThePartOfEachAttemptInsideThePeriodCounts) {
  const int64_t from = 10 * kHour, to = 20 * kHour, now = 25 * kHour;
  const std::vector<v1::UsageRecord> records = {
      // 4 cores, 2 h inside (12-14 h); waited 1 h.
      Attempt(1, "lab", "alice", "p", 4, 100, 11 * kHour, 12 * kHour, 14 * kHour),
      // started before the period: only 9-10 h outside, 10-11 h inside (1 h x 2 cores).
      Attempt(2, "lab", "alice", "p", 2, 0, 8 * kHour, 9 * kHour, 11 * kHour),
      // still running (end 0): 19 h to the period's end, 1 h x 1 core; waited 0.5 h.
      Attempt(3, "lab", "bob", "p", 1, 50, 18 * kHour + kHour / 2, 19 * kHour, 0, "RUNNING"),
      // another pool and tenant; a second attempt of job 4 (requeued) counts once as a job.
      Attempt(4, "ml", "carol", "q", 8, 0, 10 * kHour, 10 * kHour, 11 * kHour),
      Attempt(4, "ml", "carol", "q", 8, 0, 10 * kHour, 15 * kHour, 16 * kHour),
      // after the period: nothing.
      Attempt(5, "lab", "alice", "p", 4, 0, 20 * kHour, 21 * kHour, 22 * kHour),
  };
  const std::map<std::string, uint64_t> cores = {{"p", 10}, {"q", 16}, {"empty", 4}};
  auto report = BuildReport(records, from, to, now, /*by_user=*/false, cores);
  ASSERT_EQ(report.rows_size(), 2);
  const v1::ReportRow& lab = report.rows(0);
  EXPECT_EQ(lab.tenant(), "lab");
  EXPECT_EQ(lab.pool(), "p");
  EXPECT_DOUBLE_EQ(lab.core_hours(), 4 * 2 + 2 * 1 + 1 * 1);  // 11
  EXPECT_DOUBLE_EQ(lab.ksps_hours(), 100 * 2 + 50 * 1);
  EXPECT_EQ(lab.jobs(), 3u);
  EXPECT_EQ(lab.waits(), 2u);  // job 2 started before the period
  EXPECT_DOUBLE_EQ(lab.mean_wait_s(), (3600 + 1800) / 2.0);
  const v1::ReportRow& ml = report.rows(1);
  EXPECT_DOUBLE_EQ(ml.core_hours(), 16);
  EXPECT_EQ(ml.jobs(), 1u);
  EXPECT_DOUBLE_EQ(ml.mean_wait_s(), 0);  // its first start in the period, right at submit
  ASSERT_EQ(report.pools_size(), 3);
  EXPECT_EQ(report.pools(0).pool(), "empty");
  EXPECT_DOUBLE_EQ(report.pools(0).utilization(), 0);
  EXPECT_EQ(report.pools(1).pool(), "p");
  EXPECT_DOUBLE_EQ(report.pools(1).utilization(), 11.0 / (10 * 10));
  EXPECT_DOUBLE_EQ(report.pools(2).utilization(), 16.0 / (16 * 10));

  // A period that is not over yet: utilization over its past only (10-15 h).
  auto half = BuildReport(records, from, to, 15 * kHour, /*by_user=*/false, cores);
  EXPECT_DOUBLE_EQ(half.pools(2).utilization(), 16.0 / (16 * 5));

  auto by_user = BuildReport(records, from, to, now, /*by_user=*/true, cores);
  ASSERT_EQ(by_user.rows_size(), 3);
  EXPECT_EQ(by_user.rows(0).user(), "alice");
  EXPECT_DOUBLE_EQ(by_user.rows(0).core_hours(), 10);
  EXPECT_EQ(by_user.rows(1).user(), "bob");
  EXPECT_DOUBLE_EQ(by_user.rows(1).core_hours(), 1);
}

TEST(UsageReportTest, AListingKeepsTheEarliestStartsWithinItsLimit) {
  UsageLimit kept(3);
  for (int64_t start : {50, 10, 40, 20, 60, 30}) {
    kept.Add(Attempt(static_cast<uint64_t>(start), "lab", "alice", "p", 1, 0, 0, start, start + 5));
  }
  EXPECT_TRUE(kept.truncated());
  auto records = kept.Take();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].start_ms(), 10);
  EXPECT_EQ(records[1].start_ms(), 20);
  EXPECT_EQ(records[2].start_ms(), 30);
  UsageLimit all(10);
  all.Add(Attempt(1, "lab", "alice", "p", 1, 0, 0, 5, 6));
  EXPECT_FALSE(all.truncated());
  EXPECT_EQ(all.Take().size(), 1u);
}

TEST(UsageReportTest, FiltersMatchUserPoolAndStateAsWritten) {
  auto r = Attempt(1, "lab", "alice", "p", 1, 0, 0, 0, 1, "TASK_TIMED_OUT");
  v1::UsageRequest any;
  EXPECT_TRUE(UsageMatches(r, any));
  v1::UsageRequest req;
  req.set_state("timed_out");
  EXPECT_TRUE(UsageMatches(r, req));
  req.set_state("TASK_TIMED_OUT");
  EXPECT_TRUE(UsageMatches(r, req));
  req.set_state("EXITED");
  EXPECT_FALSE(UsageMatches(r, req));
  req.clear_state();
  req.set_user("bob");
  EXPECT_FALSE(UsageMatches(r, req));
  req.set_user("alice");
  req.set_pool("q");
  EXPECT_FALSE(UsageMatches(r, req));
}

TEST(UsageReportTest, ARunningTaskHasNoEndAndTheStateRunning) {
  v1::JobRecord job;
  job.set_id(7);
  job.set_tenant_job_id(3);
  job.set_tenant("lab");
  job.set_submit_ms(100);
  job.mutable_spec()->set_user("alice");
  job.mutable_spec()->set_pool("p");
  job.mutable_spec()->mutable_task()->mutable_resources()->set_cores(4);
  v1::TaskRecord task;
  task.set_state(v1::TASK_RUNNING);
  task.set_start_ms(200);
  auto r = UsageOf(job, task, "sim-v1");
  EXPECT_EQ(r.end_ms(), 0);
  EXPECT_EQ(r.state(), "RUNNING");
  EXPECT_EQ(r.cores(), 4u);
  EXPECT_EQ(r.submit_ms(), 100);
  task.set_state(v1::TASK_EXITED);
  task.set_end_ms(150);  // a clock step back: never before the start
  EXPECT_EQ(UsageOf(job, task, "sim-v1").end_ms(), 200);
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

// An experiment service held 4 cores for 10 h; ann's experiments used 2 h of board time and
// cyd's (another tenant's) 1 h. Each pays for their own board time, the owner for the rest:
// in the report by user and on each tenant's invoice, nothing twice.
TEST(UsageReportTest, AServicesUsersPayTheirBoardTimeAndItsOwnerTheRest) {
  auto service = Attempt(7, "lab", "owner", "p", 4, 0, 0, 10 * kHour, 20 * kHour);
  service.set_kind("service");
  service.set_busy_us(3 * kHour * 1000);
  auto ann = Attempt(7, "lab", "ann", "p", 4, 0, 0, 10 * kHour, 20 * kHour, "DONE");
  ann.set_kind("experiment");
  ann.set_busy_us(2 * kHour * 1000);
  auto cyd = Attempt(7, "ext", "cyd", "p", 4, 0, 0, 12 * kHour, 14 * kHour, "DONE");
  cyd.set_kind("experiment");
  cyd.set_busy_us(1 * kHour * 1000);
  const std::vector<v1::UsageRecord> records = {service, ann, cyd};
  auto report = BuildReport(records, 0, 30 * kHour, 30 * kHour, /*by_user=*/true, {{"p", 4}});
  std::map<std::string, double> hours;
  for (const auto& row : report.rows()) hours[row.tenant() + "/" + row.user()] = row.core_hours();
  EXPECT_DOUBLE_EQ(hours["lab/owner"], 4 * 7);  // 10 h held, 3 h of it its users'
  EXPECT_DOUBLE_EQ(hours["lab/ann"], 4 * 2);
  EXPECT_DOUBLE_EQ(hours["ext/cyd"], 4 * 1);
  EXPECT_DOUBLE_EQ(report.pools(0).utilization(), 4.0 * 10 / (4 * 30));  // the held time, once

  v1::BillingConfig prices;
  prices.add_prices()->set_core_hour(1.0);  // board type "": 1 per core-hour
  prices.set_minimum_s(60);
  EXPECT_EQ(ComputeInvoice("lab", 0, 30 * kHour, records, prices).subtotal_cents(), 100 * 4 * 9);
  EXPECT_EQ(ComputeInvoice("ext", 0, 30 * kHour, records, prices).subtotal_cents(), 100 * 4 * 1);
}

}  // namespace
}  // namespace snn
