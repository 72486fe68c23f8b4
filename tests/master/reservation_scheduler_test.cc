// Advance reservations in the scheduler core (issue 40): a board a reservation closes takes no
// job that would still run when it closes, whether started at once, backfilled or grown; a
// reservation's own pool opens its boards to its jobs, up to its end; the head job's EASY
// reservation lands after a closure when nothing else opens first.
#include <gtest/gtest.h>

#include "common/base/utc_time.h"
#include "master/jobs/reservation_book.h"
#include "master/sched/board_closure.h"
#include "tests/master/scheduler_scenario.h"

namespace snn {
namespace {

using testing_helpers::Board;
using testing_helpers::kMin;
using testing_helpers::Scenario;
using testing_helpers::Started;
using testing_helpers::WaitOf;

constexpr int64_t kHour = 60 * kMin;
constexpr int64_t kDay = 24 * kHour;

BoardCapacity Closed(BoardCapacity b, BoardClosure c) {
  b.closures = std::make_shared<const BoardClosures>(BoardClosures{std::move(c)});
  return b;
}

TEST(BoardClosureTest, OccurrencesRepeatByTheirPeriod) {
  const BoardClosure once{"m", 2 * kHour, 4 * kHour, 0};
  EXPECT_TRUE(once.Meets(0, 3 * kHour));
  EXPECT_TRUE(once.Meets(3 * kHour, 3 * kHour + 1));
  EXPECT_FALSE(once.Meets(0, 2 * kHour));  // ends as it opens
  EXPECT_FALSE(once.Meets(4 * kHour, 100 * kHour));
  const BoardClosure daily{"d", 2 * kHour, 4 * kHour, kDay};
  EXPECT_FALSE(daily.Meets(4 * kHour, kDay + 2 * kHour));
  EXPECT_TRUE(daily.Meets(4 * kHour, kDay + 2 * kHour + 1));
  EXPECT_TRUE(daily.Meets(10 * kDay + 3 * kHour, 10 * kDay + 3 * kHour + 1));
  int64_t s = 0, e = 0;
  ASSERT_TRUE(daily.OccurrenceAfter(5 * kDay + 4 * kHour, &s, &e));
  EXPECT_EQ(s, 6 * kDay + 2 * kHour);
  EXPECT_EQ(e, 6 * kDay + 4 * kHour);
}

TEST(ReservationSchedulerTest, AJobThatWouldRunIntoAReservationStartsOnlyOffItsBoards) {
  Scenario s;
  SchedJob& long_job = s.Pending(4, 3 * kHour);
  SchedJob& short_job = s.Pending(4, kHour);
  // One board closes in 2 h: the short job fits before it, the long one only on the other.
  const BoardClosure maint{"maint", 2 * kHour, 4 * kHour, 0};
  SchedulePlan plan = s.Plan({Closed(Board("n1", 0, 4), maint), Board("n2", 0, 4)}, {});
  ASSERT_EQ(plan.starts.size(), 2u);
  for (const auto& st : plan.starts) {
    EXPECT_EQ(st.tasks[0].node, st.job_id == long_job.id ? "n2" : "n1") << st.job_id;
  }
  EXPECT_NE(short_job.id, long_job.id);
}

TEST(ReservationSchedulerTest, TheHeadJobsReservationLandsAfterTheClosure) {
  Scenario s;
  SchedJob& job = s.Pending(4, 3 * kHour);
  SchedJob& filler = s.Pending(2, 30 * kMin);
  const BoardClosure maint{"maint", kHour, 2 * kHour, 0};
  SchedulePlan plan = s.Plan({Closed(Board("n1", 0, 4), maint)}, {});
  // It cannot finish before the closure: it waits for its end, which it holds; a job that ends
  // before the closure starts in the meantime.
  EXPECT_EQ(Started(plan), std::vector<uint64_t>{filler.id});
  const WaitDecision* w = WaitOf(plan, job.id);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->expected_start_ms, 2 * kHour);
  EXPECT_NE(w->why().find("boards of reservation maint close at " + FormatUtcTime(kHour)),
            std::string::npos)
      << w->why();
}

TEST(ReservationSchedulerTest, ADailyReservationClosesItsBoardsEveryDay) {
  Scenario s;
  SchedJob& job = s.Pending(4, 23 * kHour);
  const BoardClosure daily{"nightly", 2 * kHour, 4 * kHour, kDay};
  // At 05:00 on day 3, 23 h would reach 02:00 of day 4: never on this board.
  SchedulePlan plan = s.Plan({Closed(Board("n1", 0, 4), daily)}, {}, 3 * kDay + 5 * kHour);
  EXPECT_TRUE(plan.starts.empty());
  const WaitDecision* w = WaitOf(plan, job.id);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->expected_start_ms, 0) << w->why();  // no gap of 23 h ever opens
  // 21 h fits between two occurrences.
  Scenario fits;
  fits.Pending(4, 21 * kHour);
  EXPECT_EQ(fits.Plan({Closed(Board("n1", 0, 4), daily)}, {}, 3 * kDay + 5 * kHour).starts.size(),
            1u);
}

TEST(ReservationSchedulerTest, AReservationsPoolOpensItsBoardsToItsJobsUntilItsEnd) {
  Scenario s;
  SchedJob& outsider = s.Pending(2, 10 * kMin);
  SchedJob& member = s.Pending(2, 30 * kMin, 1, "reservation:course");
  SchedJob& too_long = s.Pending(2, 2 * kHour, 1, "reservation:course");
  const BoardClosure course{"course", 0, kHour, 0};
  BoardCapacity b = Closed(Board("n1", 0, 8), course);
  b.pools = {"default", "reservation:course"};
  SchedulerInput in = s.Input({b}, 10 * kMin);
  in.reservation_pools["reservation:course"] = ReservationPool{"course", kHour};
  SchedulePlan plan = PlanPass(std::move(in), SchedulerPolicy{});
  EXPECT_EQ(Started(plan), std::vector<uint64_t>{member.id});
  ASSERT_NE(WaitOf(plan, outsider.id), nullptr);
  EXPECT_NE(WaitOf(plan, outsider.id)->why().find("boards of reservation course are closed"),
            std::string::npos)
      << WaitOf(plan, outsider.id)->why();
  ASSERT_NE(WaitOf(plan, too_long.id), nullptr);
  EXPECT_NE(WaitOf(plan, too_long.id)->why().find("runs past the end of reservation course"),
            std::string::npos);
}

TEST(ReservationSchedulerTest, ElasticJobsDoNotGrowIntoAReservation) {
  Scenario s;
  SchedJob& e = s.Running(2, 0, 10 * kHour, {TaskPlacement{"n1", 0, Rect{0, 0, 2, 1}}});
  e.max_replicas = 4;
  const BoardClosure maint{"maint", 5 * kHour, 6 * kHour, 0};
  SchedulePlan plan =
      s.Plan({Board("n1", 0, 4), Closed(Board("n2", 0, 8), maint)}, SchedulerPolicy{}, kHour);
  // Room for one more on n1; n2 closes before the job's time limit ends.
  ASSERT_EQ(plan.grows.size(), 1u);
  ASSERT_EQ(plan.grows[0].tasks.size(), 1u);
  EXPECT_EQ(plan.grows[0].tasks[0].node, "n1");
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

TEST(ReservationBookTest, AJobNamingAReservationThatIsGoneIsHeldNotRunAnywhere) {
  // As after a restart that found its reservation over: the book never knew it.
  testing_helpers::Scenario s;
  SchedJob& job = s.Pending(1);
  job.reservation = "course";
  SchedulerInput in = s.Input({testing_helpers::Board("n1", 0, 4)});
  ReservationBook book;
  ReservationBook::Holds holds;
  book.Apply(in, holds);
  SchedulePlan plan = PlanPass(std::move(in), SchedulerPolicy{});
  EXPECT_TRUE(plan.starts.empty());
  const WaitDecision* w = testing_helpers::WaitOf(plan, job.id);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->why(),
            "reservation course is over or was deleted: it can never start (snnctl "
            "cancel it)");
}

TEST(ReservationBookTest, ItsJobsGoToItsPoolOnlyWhileItIsOpen) {
  NodeRegistry nodes;
  ReservationBook book;
  v1::Reservation r;
  r.set_name("course");
  r.set_start_ms(kHour);
  r.set_duration_ms(kHour);
  r.set_pool("default");
  r.add_tenants("t");
  auto* b = r.add_boards();
  b->set_node("n1");
  book.Add(r);
  for (int64_t now : {int64_t{0}, kHour + 1, 2 * kHour}) {
    testing_helpers::Scenario s;
    SchedJob& job = s.Pending(1, 30 * kMin);
    job.reservation = "course";
    SchedJob& other = s.Pending(1, 30 * kMin);
    SchedulerInput in = s.Input({testing_helpers::Board("n1", 0, 4)}, now);
    ReservationBook::Holds holds;
    book.Apply(in, holds);
    SchedulePlan plan = PlanPass(std::move(in), SchedulerPolicy{});
    const bool open = now == kHour + 1;
    // Before it opens, its job waits and the other runs (it ends before); while open, only its
    // own; once over (not yet expired from the book), the board is open again to the other.
    std::vector<uint64_t> expected =
        open ? std::vector<uint64_t>{job.id} : std::vector<uint64_t>{other.id};
    EXPECT_EQ(testing_helpers::Started(plan), expected) << now;
    if (now == 2 * kHour) {
      ASSERT_NE(testing_helpers::WaitOf(plan, job.id), nullptr);
      EXPECT_NE(testing_helpers::WaitOf(plan, job.id)->why().find("is over or was deleted"),
                std::string::npos);
    }
  }
}

}  // namespace
}  // namespace snn
