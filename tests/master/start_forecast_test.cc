// The start forecast: the scheduler's plan carried forward as running jobs reach their limits.
#include "master/sched/start_forecast.h"

#include <gtest/gtest.h>

#include "tests/master/scheduler_scenario.h"

namespace snn {
namespace {

using testing_helpers::Board;
using testing_helpers::Fcfs;
using testing_helpers::kMin;
using testing_helpers::Scenario;

const StartForecast& Of(const std::vector<StartForecast>& f, uint64_t id) {
  for (const StartForecast& x : f) {
    if (x.job_id == id) return x;
  }
  static const StartForecast none;
  ADD_FAILURE() << "no forecast for job " << id;
  return none;
}

// Four one-row boards of 4 cores; two are busy until minute 30 and 60 (as the EASY test).
std::vector<BoardCapacity> FourBoards() {
  return {Board("n1", 0, 4), Board("n2", 0, 4), Board("n3", 0, 4), Board("n4", 0, 4)};
}

TEST(StartForecastTest, EveryPendingJobStartsWhenThePlanCarriedForwardStartsIt) {
  Scenario s;
  s.Running(4, 0, 30 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}}});
  s.Running(4, 0, 60 * kMin, {{"n2", 0, Rect{0, 0, 4, 1}}});
  const auto head = s.Pending(4, 60 * kMin, /*replicas=*/3).id;
  const auto long_job = s.Pending(4, 40 * kMin).id;   // would delay the head: after it
  const auto short_job = s.Pending(4, 20 * kMin).id;  // ends before minute 30: backfilled now
  const auto last = s.Pending(4, 10 * kMin, 4).id;    // every board: once the head and long end
  const int64_t now = 5 * kMin;
  auto f = ForecastStarts(s.Input(FourBoards(), now), SchedulerPolicy{});
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(Of(f, short_job).start_ms, now);
  EXPECT_TRUE(Of(f, short_job).backfilled);
  EXPECT_EQ(Of(f, head).start_ms, 30 * kMin);
  EXPECT_FALSE(Of(f, head).backfilled);
  EXPECT_EQ(Of(f, long_job).start_ms, 60 * kMin);  // n2 frees at 60
  EXPECT_EQ(Of(f, last).start_ms, 100 * kMin);     // long ends at 100, the head at 90
  for (const StartForecast& x : f) EXPECT_EQ(x.basis, StartForecast::Basis::kPlan);
  // The order is the input's; FCFS lets nothing pass the head.
  f = ForecastStarts(s.Input(FourBoards(), now), Fcfs());
  EXPECT_EQ(Of(f, short_job).start_ms, 90 * kMin);  // once the head ends
  EXPECT_EQ(Of(f, long_job).start_ms, 60 * kMin);
}

TEST(StartForecastTest, HeldJobsJobsThatNeverFitAndJobsBeyondTheLimitHaveNoStart) {
  Scenario s;
  s.Running(4, 0, 30 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}}});
  SchedJob& held = s.Pending(4);
  held.hold = std::make_shared<const std::string>("held by its user");
  const auto too_big = s.Pending(4, 10 * kMin, /*replicas=*/5).id;  // four boards only
  const auto fits = s.Pending(4, 10 * kMin, /*replicas=*/4).id;
  const auto third = s.Pending(4).id;
  auto f = ForecastStarts(s.Input(FourBoards()), SchedulerPolicy{});
  EXPECT_EQ(Of(f, held.id).basis, StartForecast::Basis::kHeld);
  EXPECT_EQ(Of(f, held.id).start_ms, 0);
  EXPECT_EQ(Of(f, too_big).basis, StartForecast::Basis::kNever);
  EXPECT_EQ(Of(f, fits).start_ms, 30 * kMin);
  EXPECT_EQ(Of(f, third).start_ms, 0);  // backfilled at once on a free board
  ForecastLimits limits;
  limits.max_jobs = 3;
  f = ForecastStarts(s.Input(FourBoards()), SchedulerPolicy{}, limits);
  EXPECT_EQ(Of(f, fits).start_ms, 30 * kMin);
  EXPECT_EQ(Of(f, third).basis, StartForecast::Basis::kBeyondLimit);
  // A tenant over its budget: its jobs are held.
  SchedulerPolicy budget;
  budget.held_tenants["t"] = std::make_shared<const std::string>("over budget");
  f = ForecastStarts(s.Input(FourBoards()), budget);
  EXPECT_EQ(Of(f, fits).basis, StartForecast::Basis::kHeld);
}

TEST(StartForecastTest, QuotasHoldAJobUntilItsTenantsJobsEnd) {
  Scenario s;
  const auto first = s.Pending(4, 30 * kMin).id;
  const auto second = s.Pending(4, 30 * kMin).id;
  SchedulerPolicy p;
  p.tenant_quotas[{"t", "default"}] = Quota{4, 0};
  auto f = ForecastStarts(s.Input(FourBoards()), p);
  EXPECT_EQ(Of(f, first).start_ms, 0);
  EXPECT_EQ(Of(f, second).start_ms, 30 * kMin);
}

// Tenant t may use 10 core-hours in any 7 days. Two 4-core jobs of 1 h (4 core-hours each) fit,
// a third does not: the plan starts the first two and gives the third no start ("limit"), where
// it used to plan it once the boards were free. A tenant that has used 8 core-hours already gets
// no start for any of them.
TEST(StartForecastTest, ACoreHourLimitGetsNoStartRatherThanAGuess) {
  constexpr int64_t kHour = 60 * kMin;
  Scenario s;
  s.Running(4, 0, 30 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}}});
  s.Running(4, 0, 30 * kMin, {{"n2", 0, Rect{0, 0, 4, 1}}});
  s.Running(4, 0, 30 * kMin, {{"n3", 0, Rect{0, 0, 4, 1}}});
  const auto first = s.Pending(4, kHour).id;
  const auto second = s.Pending(4, kHour).id;
  const auto third = s.Pending(4, kHour).id;
  SchedulerPolicy p;
  p.tenant_core_hours["t"] = CoreHourLimit{10.0 * kHour, 7 * 24 * kHour};
  // The running jobs (of tenant t too) hold 3 x 4 x 0.5 = 6 core-hours: only the first fits.
  auto f = ForecastStarts(s.Input(FourBoards()), p);
  EXPECT_EQ(Of(f, first).basis, StartForecast::Basis::kPlan);
  EXPECT_EQ(Of(f, first).start_ms, 0);
  EXPECT_EQ(Of(f, second).basis, StartForecast::Basis::kLimited);
  EXPECT_EQ(Of(f, second).start_ms, 0);
  EXPECT_EQ(Of(f, third).basis, StartForecast::Basis::kLimited);
  EXPECT_EQ(BasisName(StartForecast::Basis::kLimited), "limit");
  // Without the limit all three are planned.
  f = ForecastStarts(s.Input(FourBoards()), SchedulerPolicy{});
  EXPECT_EQ(Of(f, third).basis, StartForecast::Basis::kPlan);
  EXPECT_EQ(Of(f, third).start_ms, 30 * kMin);
  // What ended in the window counts: 8 core-hours used, none of them fits.
  SchedulerInput in = s.Input(FourBoards());
  auto ended = std::make_shared<EndedCoreTime>();
  ended->tenants["t"] = 8.0 * kHour;
  in.ended = ended;
  f = ForecastStarts(in, p);
  EXPECT_EQ(Of(f, first).basis, StartForecast::Basis::kLimited);
}

}  // namespace
}  // namespace snn
