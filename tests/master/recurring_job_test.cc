// Recurring jobs in-process with a manual clock (issue 40): a job with `schedule:` never runs
// itself; each time its schedule comes it submits a run, a job of its own, unless the last run
// is still live or the recurring job is held (that time is skipped, and counted); cancelling
// it stops its runs; what cannot recur is refused at submit.
#include <gtest/gtest.h>

#include "common/base/cron_schedule.h"
#include "tests/master/in_process_master.h"

namespace snn {
namespace {

class RecurringJobTest : public InProcessMaster {
 protected:
  void SetUp() override { AddNode("n1", 1); }
  static v1::JobSpec Spec(const std::string& schedule) {
    v1::JobSpec spec;
    spec.set_name("calibrate");
    spec.set_min_replicas(1);
    spec.set_schedule(schedule);
    spec.mutable_task()->set_command("/bin/true");
    auto* r = spec.mutable_task()->mutable_resources();
    r->set_cores(1);
    r->set_ksps(10);
    r->set_streams(1);
    return spec;
  }
  void Pass() {
    components_.scheduling.RunSchedulingPass();
    journal_.Commit();
  }
  // Moves the clock to the recurring job's next run and lets the master see it.
  void ToNextRun(uint64_t id) {
    clock_.AdvanceMs(jobs_.Find(id)->next_run_ms() - clock_.NowMs());
    components_.lifecycle.RunSchedules();
  }
  v1::JobRecord* LastRun(uint64_t id) {
    const v1::JobRecord* r = jobs_.Find(id);
    return jobs_.FindByTenant(r->tenant(), r->last_run());
  }
  void End(v1::JobRecord& job) {
    v1::TaskStatus s;
    s.set_job_id(job.id());
    s.set_index(0);
    s.set_attempt(job.attempt());
    s.set_state(v1::TASK_EXITED);
    components_.lifecycle.ApplyTaskStatus("n1", s);
    journal_.Commit();
  }
};

TEST_F(RecurringJobTest, EachTimeItComesARunIsSubmittedUnlessTheLastIsStillLive) {
  auto submitted = components_.lifecycle.Submit(Spec("*/10 * * * *"), "alice");
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  journal_.Commit();
  const uint64_t id = (*submitted)->id();
  const int64_t first = *CronSchedule::Parse("*/10 * * * *")->NextAfter(clock_.NowMs());
  EXPECT_EQ(jobs_.Find(id)->next_run_ms(), first);
  Pass();  // it never runs itself
  EXPECT_EQ(jobs_.Find(id)->state(), v1::PENDING);
  EXPECT_EQ(jobs_.Find(id)->reason().rfind("recurring (*/10 * * * *): next run at ", 0), 0u)
      << jobs_.Find(id)->reason();
  components_.lifecycle.RunSchedules();  // not due yet
  EXPECT_EQ(jobs_.Find(id)->runs(), 0u);

  ToNextRun(id);
  ASSERT_EQ(jobs_.Find(id)->runs(), 1u);
  EXPECT_EQ(jobs_.Find(id)->next_run_ms(), first + 600'000);
  v1::JobRecord* run = LastRun(id);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->recurring_job_id(), jobs_.Find(id)->tenant_job_id());
  EXPECT_TRUE(run->spec().schedule().empty());
  Pass();
  EXPECT_EQ(LastRun(id)->state(), v1::RUNNING);

  ToNextRun(id);  // the run is still going: this time is skipped
  EXPECT_EQ(jobs_.Find(id)->runs(), 1u);
  EXPECT_EQ(jobs_.Find(id)->runs_skipped(), 1u);
  End(*LastRun(id));
  ToNextRun(id);
  EXPECT_EQ(jobs_.Find(id)->runs(), 2u);

  Pass();
  End(*LastRun(id));
  ASSERT_TRUE(components_.lifecycle.Hold(*jobs_.Find(id), "alice").ok());  // paused
  ToNextRun(id);
  EXPECT_EQ(jobs_.Find(id)->runs(), 2u);
  EXPECT_EQ(jobs_.Find(id)->runs_skipped(), 2u);
  ASSERT_TRUE(components_.lifecycle.Release(*jobs_.Find(id)).ok());
  ASSERT_TRUE(components_.lifecycle.Cancel(*jobs_.Find(id), "cancelled by alice").ok());
  journal_.Commit();
  auto runs = [&] {
    size_t n = 0;
    for (const auto& [jid, job] : jobs_.jobs()) n += job.recurring_job_id() != 0;
    return n;
  };
  const size_t before = runs();
  clock_.AdvanceMs(3'600'000);
  components_.lifecycle.RunSchedules();
  EXPECT_EQ(runs(), before);  // no run after the cancel
}

TEST_F(RecurringJobTest, WhatCannotRecurIsRefusedAtSubmit) {
  EXPECT_EQ(components_.lifecycle.Submit(Spec("0 3 * *"), "alice").status().message(),
            "schedule '0 3 * *' is not five fields (minute hour day-of-month month "
            "day-of-week, as cron: \"0 3 * * *\" is every day at 03:00 UTC)");
  v1::JobSpec array = Spec("0 3 * * *");
  array.mutable_array()->add_ranges()->set_last(3);
  array.mutable_array()->mutable_ranges(0)->set_step(1);
  EXPECT_EQ(components_.lifecycle.Submit(array, "alice").status().message(),
            "schedule: only a batch job recurs (not an array, session or service)");
  v1::JobSpec after = Spec("0 3 * * *");
  after.add_after_ok(1);
  EXPECT_FALSE(components_.lifecycle.Submit(after, "alice").ok());
}

}  // namespace
}  // namespace snn
