// The scheduler core on hand-made states: placement, gangs, pools, FCFS and EASY backfill with
// reservations, quotas and queue limits, preemption by tier and by guarantee, grace periods.
#include "master/sched/scheduler.h"

#include <gtest/gtest.h>

#include "master/sched/policy_config.h"
#include "tests/master/scheduler_scenario.h"

namespace snn {
namespace {

using testing_helpers::Board;
using testing_helpers::Fcfs;
using testing_helpers::kMin;
using testing_helpers::MeshBoard;
using testing_helpers::Scenario;
using testing_helpers::Started;
using testing_helpers::WaitOf;

TEST(SchedulerTest, StartsInTheGivenOrderAndFcfsLetsNothingPassTheHead) {
  Scenario s;
  const auto a = s.Pending(4).id, b = s.Pending(4).id, c = s.Pending(4).id, d = s.Pending(1).id;
  SchedulePlan plan = s.Plan({Board("n1", 0, 8)}, Fcfs());
  EXPECT_EQ(Started(plan), (std::vector<uint64_t>{a, b}));
  ASSERT_NE(WaitOf(plan, c), nullptr);
  EXPECT_NE(WaitOf(plan, c)->why().find("waiting for resources"), std::string::npos);
  EXPECT_EQ(WaitOf(plan, d), nullptr) << "behind the head, untried";
}

TEST(SchedulerTest, FirstBoardWithEnoughOfEverything) {
  Scenario s;
  s.Pending(10);
  auto small = Board("n1", 0, 8);
  auto no_streams = Board("n1", 1, 64);
  no_streams.streams_free = 0;
  SchedulePlan plan = s.Plan({small, no_streams, Board("n2", 0, 64)}, SchedulerPolicy{});
  ASSERT_EQ(plan.starts.size(), 1u);
  EXPECT_EQ(plan.starts[0].tasks[0].node, "n2");
}

TEST(SchedulerTest, HonoursPoolsAndBoardTypes) {
  Scenario s;
  v1::Resources typed;
  SchedJob& job = s.Pending(4, 10 * kMin, 1, "gpuish");
  typed = *job.resources;
  typed.set_board_type("sim-v2");
  job.resources = &typed;
  SchedulePlan plan = s.Plan(
      {Board("n1", 0, 64, "default", "sim-v2"), Board("n2", 0, 64, "gpuish")}, SchedulerPolicy{});
  EXPECT_TRUE(plan.starts.empty());
  ASSERT_EQ(plan.waits.size(), 1u);
  EXPECT_NE(plan.waits[0].why().find("none is available"), std::string::npos)
      << plan.waits[0].why();
  plan = s.Plan({Board("n3", 0, 64, "gpuish", "sim-v2")}, SchedulerPolicy{});
  EXPECT_EQ(plan.starts.size(), 1u);
}

TEST(SchedulerTest, GangStartsTogetherOrNotAtAllWithoutHoldingAnything) {
  Scenario s;
  const auto gang = s.Pending(8, 10 * kMin, /*replicas=*/3).id;
  const auto other = s.Pending(8).id;
  // Room for two replicas only: the gang waits and holds nothing; under FCFS so does the other.
  SchedulePlan plan = s.Plan({Board("n1", 0, 8), Board("n2", 0, 8)}, Fcfs());
  EXPECT_TRUE(plan.starts.empty());
  EXPECT_NE(WaitOf(plan, gang), nullptr);
  // With EASY the other job runs meanwhile: the gang cannot start before something ends anyway.
  plan = s.Plan({Board("n1", 0, 8), Board("n2", 0, 8)}, SchedulerPolicy{});
  EXPECT_EQ(Started(plan), std::vector<uint64_t>{other});
  plan = s.Plan({Board("n1", 0, 8), Board("n2", 0, 8), Board("n3", 0, 16)}, Fcfs());
  ASSERT_EQ(plan.starts.size(), 2u);
  EXPECT_EQ(plan.starts[0].tasks.size(), 3u);
}

TEST(SchedulerTest, PoolsAreIndependent) {
  Scenario s;
  s.Pending(16, 10 * kMin, 1, "a");  // blocks pool a
  const auto b = s.Pending(4, 10 * kMin, 1, "b").id;
  SchedulePlan plan = s.Plan({Board("n1", 0, 8, "a"), Board("n2", 0, 8, "b")}, Fcfs());
  EXPECT_EQ(Started(plan), std::vector<uint64_t>{b});
}

TEST(SchedulerTest, PlacesRectanglesWithoutOverlapAndSaysWhenContiguityIsMissing) {
  Scenario s;
  std::deque<v1::Resources> shapes;
  auto shaped = [&](uint32_t w, uint32_t h) {
    SchedJob& j = s.Pending(w * h);
    v1::Resources& r = shapes.emplace_back(*j.resources);
    r.set_shape_width(w);
    r.set_shape_height(h);
    j.resources = &r;
  };
  shaped(4, 2);
  shaped(4, 2);
  SchedulePlan plan = s.Plan({MeshBoard("n1", 4, 4)}, SchedulerPolicy{});
  ASSERT_EQ(plan.starts.size(), 2u);
  const Rect a = plan.starts[0].tasks[0].rect, b = plan.starts[1].tasks[0].rect;
  const bool overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
  EXPECT_FALSE(overlap) << a.ToString() << " " << b.ToString();

  Scenario w;
  SchedJob& five = w.Pending(25);
  v1::Resources r = *five.resources;
  r.set_shape_width(5);
  r.set_shape_height(5);
  five.resources = &r;
  std::vector<Rect> held;  // 8x8 with columns 1, 3, 5, 7 held: 32 free cores, no 5x5 block
  for (uint32_t x = 1; x < 8; x += 2) held.push_back(Rect{x, 0, 1, 8});
  plan = w.Plan({MeshBoard("n1", 8, 8, held)}, Fcfs());
  ASSERT_EQ(plan.waits.size(), 1u);
  EXPECT_NE(plan.waits[0].why().find("waiting for a contiguous 5x5 region"), std::string::npos)
      << plan.waits[0].why();
  EXPECT_NE(plan.waits[0].why().find("32 free cores"), std::string::npos);
}

// Four one-row boards of 4 cores; two are busy until minute 30 and 60.
TEST(SchedulerTest, EasyBackfillsWhatEndsBeforeTheReservationAndNothingThatWouldDelayIt) {
  Scenario s;
  s.Running(4, 0, 30 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}}});
  s.Running(4, 0, 60 * kMin, {{"n2", 0, Rect{0, 0, 4, 1}}});
  SchedJob& head_job = s.Pending(4, 60 * kMin, /*replicas=*/3);  // needs three boards
  head_job.tenant_job_id = 18;                                   // what its tenant calls it
  const auto head = head_job.id;
  const auto long_job = s.Pending(4, 40 * kMin).id;   // would still run at minute 30
  const auto short_job = s.Pending(4, 20 * kMin).id;  // ends before minute 30
  const std::vector<BoardCapacity> boards = {Board("n1", 0, 4), Board("n2", 0, 4),
                                             Board("n3", 0, 4), Board("n4", 0, 4)};
  SchedulePlan plan = s.Plan(boards, SchedulerPolicy{}, /*now=*/10 * kMin);
  // The head fits once n1 frees at minute 30 (n1, n3, n4): it holds that reservation.
  ASSERT_NE(WaitOf(plan, head), nullptr);
  EXPECT_EQ(WaitOf(plan, head)->expected_start_ms, 30 * kMin);
  EXPECT_EQ(Started(plan), std::vector<uint64_t>{short_job});
  ASSERT_NE(WaitOf(plan, long_job), nullptr);
  // Named as its tenant knows it (users see per-tenant job numbers), never by the global id.
  EXPECT_NE(WaitOf(plan, long_job)->why().find("could delay job 18 of tenant t"), std::string::npos)
      << WaitOf(plan, long_job)->why();
  // FCFS starts nothing: the head blocks the pool.
  EXPECT_TRUE(s.Plan(boards, Fcfs(), 10 * kMin).starts.empty());
}

// A job started earlier in the same pass ends by its time limit like any other: the
// reservation counts on its board, and what would outlast that reservation waits.
TEST(SchedulerTest, EasyReservesOnWhatThisPassJustStartedWhenThatEndsFirst) {
  Scenario s;
  s.Running(4, 0, 60 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}}});
  const auto quick = s.Pending(4, 10 * kMin).id;                 // takes one of n2..n4
  const auto head = s.Pending(4, 60 * kMin, /*replicas=*/3).id;  // fits when `quick` ends
  const auto middle = s.Pending(4, 30 * kMin).id;                // would outlast minute 10
  SchedulePlan plan =
      s.Plan({Board("n1", 0, 4), Board("n2", 0, 4), Board("n3", 0, 4), Board("n4", 0, 4)},
             SchedulerPolicy{}, 0);
  EXPECT_EQ(Started(plan), std::vector<uint64_t>{quick});
  ASSERT_NE(WaitOf(plan, head), nullptr);
  EXPECT_EQ(WaitOf(plan, head)->expected_start_ms, 10 * kMin);
  ASSERT_NE(WaitOf(plan, middle), nullptr);
  EXPECT_NE(WaitOf(plan, middle)->why().find("could delay job " + std::to_string(head)),
            std::string::npos)
      << WaitOf(plan, middle)->why();
}

TEST(SchedulerTest, EasyLetsALongJobUseWhatTheReservationLeavesFree) {
  Scenario t;
  t.Running(4, 0, 30 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}}});
  t.Running(4, 0, 30 * kMin, {{"n2", 0, Rect{0, 0, 4, 1}}});
  const auto big = t.Pending(4, 60 * kMin, /*replicas=*/3).id;  // n1, n2 at minute 30, plus one
  const auto l1 = t.Pending(4, 600 * kMin).id;
  const auto l2 = t.Pending(4, 600 * kMin).id;
  SchedulePlan plan =
      t.Plan({Board("n1", 0, 4), Board("n2", 0, 4), Board("n3", 0, 4), Board("n4", 0, 4)},
             SchedulerPolicy{}, 0);
  EXPECT_EQ(WaitOf(plan, big)->expected_start_ms, 30 * kMin);
  // One of n3, n4 is reserved; the other is extra: exactly one long job starts.
  EXPECT_EQ(Started(plan), std::vector<uint64_t>{l1});
  EXPECT_NE(WaitOf(plan, l2), nullptr);
}

TEST(SchedulerTest, ShortestFirstBackfillTriesShortJobsFirst) {
  Scenario s;
  s.Running(4, 0, 30 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}}});
  s.Pending(4, 60 * kMin, /*replicas=*/2);  // the head: n2 and, at minute 30, n1
  const auto long_job = s.Pending(4, 20 * kMin).id;
  const auto short_job = s.Pending(4, 5 * kMin).id;
  SchedulerPolicy p;
  p.backfill_shortest_first = true;
  // One free 4-core board (n2) and two candidates that both end before minute 30.
  SchedulePlan plan = s.Plan({Board("n1", 0, 4), Board("n2", 0, 4)}, p);
  EXPECT_EQ(Started(plan), std::vector<uint64_t>{short_job});
  p.backfill_shortest_first = false;
  plan = s.Plan({Board("n1", 0, 4), Board("n2", 0, 4)}, p);
  EXPECT_EQ(Started(plan), std::vector<uint64_t>{long_job});
}

// Shortest-first, but a job that has waited past backfill_age_first_after is tried before
// shorter ones: small short jobs must not take every hole ahead of it for ever.
TEST(SchedulerTest, ShortestFirstBackfillTriesAnOldJobBeforeShorterYoungOnes) {
  Scenario s;
  s.Running(4, 0, 30 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}}});
  s.Pending(4, 60 * kMin, /*replicas=*/2);  // the head: n2 and, at minute 30, n1
  const auto young = s.Pending(4, 5 * kMin).id;
  SchedJob& old = s.Pending(4, 20 * kMin);  // both end before minute 30; one free board
  old.submit_ms = -3 * 60 * kMin;
  SchedulerPolicy p;
  p.backfill_shortest_first = true;
  p.backfill_age_first_after_ms = 2 * 60 * kMin;
  EXPECT_EQ(Started(s.Plan({Board("n1", 0, 4), Board("n2", 0, 4)}, p)),
            std::vector<uint64_t>{old.id});
  p.backfill_age_first_after_ms = 4 * 60 * kMin;  // it has not waited that long
  EXPECT_EQ(Started(s.Plan({Board("n1", 0, 4), Board("n2", 0, 4)}, p)),
            std::vector<uint64_t>{young});
  p.backfill_age_first_after_ms = 0;  // off
  EXPECT_EQ(Started(s.Plan({Board("n1", 0, 4), Board("n2", 0, 4)}, p)),
            std::vector<uint64_t>{young});
}

// While the reservation's job starves, what it leaves over goes to the candidates that would run
// past its start by priority, not shortest first: long jobs held back while young would otherwise
// all come at once onto what the starving job's successors need.
TEST(SchedulerTest, PastAStarvingReservationBackfillGoesByPriority) {
  Scenario t;
  t.Running(4, 0, 30 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}}});
  t.Running(4, 0, 30 * kMin, {{"n2", 0, Rect{0, 0, 4, 1}}});
  t.Pending(4, 60 * kMin, /*replicas=*/3);  // n1, n2 at minute 30, plus one of n3, n4
  const auto shorter = t.Pending(4, 100 * kMin).id;
  const auto valued = t.Pending(4, 600 * kMin).id;
  const std::vector<BoardCapacity> boards = {Board("n1", 0, 4), Board("n2", 0, 4),
                                             Board("n3", 0, 4), Board("n4", 0, 4)};
  auto started = [&](bool head_starving, const SchedulerPolicy& p) {
    SchedulerInput in = t.Input(boards);
    in.pending[0].starving = head_starving;
    in.pending[1].priority = 10;
    in.pending[2].priority = 20;
    return Started(PlanPass(std::move(in), p));
  };
  SchedulerPolicy p = ToSchedulerPolicy(DefaultSchedulingConfig());
  ASSERT_TRUE(p.backfill_shortest_first && p.backfill_past_reservation_by_priority);
  p.preemption = false;
  // Only one of the two fits on what the reservation leaves over.
  EXPECT_EQ(started(true, p), std::vector<uint64_t>{valued});
  EXPECT_EQ(started(false, p), std::vector<uint64_t>{shorter});  // no one starves: shortest
  p.backfill_past_reservation_by_priority = false;
  EXPECT_EQ(started(true, p), std::vector<uint64_t>{shorter});
}

TEST(SchedulerTest, ATenantAtItsLimitWaitsAndSaysSoWhileAnotherStarts) {
  Scenario s;
  SchedJob& running = s.Running(4, 0, 60 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}}});
  running.tenant = "alice";
  SchedJob& more = s.Pending(4);
  more.tenant = "alice";
  SchedJob& other = s.Pending(4);
  other.tenant = "bob";
  SchedulerPolicy p;
  p.tenant_quotas[{"alice", "default"}] = Quota{6, 0};
  SchedulePlan plan = s.Plan({Board("n1", 0, 16)}, p);
  EXPECT_EQ(Started(plan), std::vector<uint64_t>{other.id});
  ASSERT_NE(WaitOf(plan, more.id), nullptr);
  EXPECT_EQ(
      WaitOf(plan, more.id)->why(),
      "tenant alice is at its limit in pool 'default': 4 of 6 cores in use, and this job needs 4");
  p.tenant_quotas[{"alice", "default"}] = Quota{8, 0};
  EXPECT_EQ(s.Plan({Board("n1", 0, 16)}, p).starts.size(), 2u);
}

TEST(SchedulerTest, AQueueAtItsMaxWaits) {
  Scenario s;
  SchedJob& a = s.Pending(4);
  SchedJob& b = s.Pending(4);
  b.queue = "batch";
  SchedJob& c = s.Pending(4);
  c.queue = "batch";
  SchedulerPolicy p;
  p.queue_quotas[{"batch", "default"}] = Quota{4, 0};
  SchedulePlan plan = s.Plan({Board("n1", 0, 16)}, p);
  EXPECT_EQ(Started(plan), (std::vector<uint64_t>{a.id, b.id}));
  EXPECT_NE(WaitOf(plan, c.id)->why().find("queue batch is at its limit"), std::string::npos);
}

TEST(SchedulerTest, AHigherTierPreemptsTheYoungestLowerTierPreemptibleJobPastItsGrace) {
  Scenario s;
  SchedJob& old_low = s.Running(4, 0, 600 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}}});
  old_low.preemptible = true;
  SchedJob& young_low = s.Running(4, 50 * kMin, 600 * kMin, {{"n2", 0, Rect{0, 0, 4, 1}}});
  young_low.preemptible = true;
  SchedJob& protected_job = s.Running(4, 0, 600 * kMin, {{"n3", 0, Rect{0, 0, 4, 1}}});
  SchedJob& urgent = s.Pending(4);
  urgent.tier = {10, 0};
  const auto bystander = s.Pending(4).id;
  const std::vector<BoardCapacity> boards = {Board("n1", 0, 4), Board("n2", 0, 4),
                                             Board("n3", 0, 4)};
  SchedulerPolicy p;
  p.preempt_grace_ms = 5 * kMin;
  SchedulePlan plan = s.Plan(boards, p, 60 * kMin);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].job_id, young_low.id);
  EXPECT_EQ(plan.preemptions[0].reason, "preempted by job " + std::to_string(urgent.id));
  EXPECT_EQ(WaitOf(plan, urgent.id)->why(),
            "preempting job(s) " + std::to_string(young_low.id) + " to start");
  EXPECT_TRUE(plan.starts.empty()) << "job " << bystander << " may not take the preemptor's room";
  (void)protected_job;
  // Within the grace period the young job is safe: the old one goes instead.
  plan = s.Plan(boards, p, 52 * kMin);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].job_id, old_low.id);
  // The same tier preempts nothing; with preemption off neither does a higher one.
  urgent.tier = {0, 0};
  EXPECT_TRUE(s.Plan(boards, p, 60 * kMin).preemptions.empty());
  urgent.tier = {10, 0};
  p.preemption = false;
  EXPECT_TRUE(s.Plan(boards, p, 60 * kMin).preemptions.empty());
}

TEST(SchedulerTest, ATenantUnderItsGuaranteeReclaimsFromOneOverItsOwn) {
  Scenario s;
  SchedJob& hog = s.Running(8, 0, 600 * kMin, {{"n1", 0, Rect{0, 0, 8, 1}}});
  hog.tenant = "bob";
  hog.preemptible = true;
  SchedJob& mine = s.Pending(4);
  mine.tenant = "alice";
  SchedulerPolicy p;
  p.preempt_grace_ms = 0;
  p.tenant_quotas[{"alice", "default"}] = Quota{UINT64_MAX, 4};
  p.tenant_quotas[{"bob", "default"}] = Quota{UINT64_MAX, 4};
  SchedulePlan plan = s.Plan({Board("n1", 0, 8)}, p, kMin);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].job_id, hog.id);
  // Bob within his guarantee keeps his job.
  p.tenant_quotas[{"bob", "default"}] = Quota{UINT64_MAX, 8};
  EXPECT_TRUE(s.Plan({Board("n1", 0, 8)}, p, kMin).preemptions.empty());
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

// A class of one-core boards (as snn-sim replays a machine of thousands of processors): what a
// job takes is counted, one step per job, and EASY reserves from the profile of the running
// jobs' releases: the textbook way, which stops at the first release that makes the head fit,
// or counting every board free at the reservation's time.
TEST(SchedulerTest, OneCoreBoardsAreCountedAndEasyReservesFromTheReleaseProfile) {
  Scenario s;
  auto holding = [](uint32_t n) {
    TaskPlacement t{"units", 0, Rect{0, 0, 1, 1}};
    t.count = n;
    return std::vector<TaskPlacement>{t};
  };
  for (int i = 0; i < 3; ++i) s.Running(1, 0, 100'000, holding(3));  // each ends at 100 s
  const SchedJob& head = s.Pending(1, 10 * kMin, 7);
  const SchedJob& long_pair = s.Pending(1, 1000 * kMin, 2);
  const SchedJob& long_one = s.Pending(1, 1000 * kMin, 1);
  const SchedJob& short_one = s.Pending(1, 50'000, 1);
  const SchedJob& too_wide = s.Pending(1, kMin, 13);
  BoardCapacity units;
  units.node = "units";
  units.type = "sim";
  units.pools = {"default"};
  units.ksps_total = 10;
  units.streams_total = 1;
  units.units = 12;
  units.units_free = 3;
  SchedulerPolicy easy;
  easy.textbook_easy = true;
  SchedulePlan plan = s.Plan({units}, easy);
  // The head needs 7 of 3 free: the first job ending at 100 s makes 6, the second 9, so it
  // reserves 100 s and leaves 2 for jobs still running then (not 5, from all three).
  ASSERT_NE(WaitOf(plan, head.id), nullptr);
  EXPECT_EQ(WaitOf(plan, head.id)->expected_start_ms, 100'000);
  EXPECT_EQ(Started(plan), (std::vector<uint64_t>{long_pair.id, short_one.id}));
  ASSERT_EQ(plan.starts[0].tasks.size(), 1u);  // one step for the pair
  EXPECT_EQ(plan.starts[0].tasks[0].count, 2u);
  EXPECT_EQ(plan.starts[0].tasks[0].node, "units");
  EXPECT_NE(WaitOf(plan, long_one.id), nullptr);  // it would delay the head
  const WaitDecision* never = WaitOf(plan, too_wide.id);
  ASSERT_NE(never, nullptr);
  EXPECT_NE(never->why().find("can never hold 13 replicas"), std::string::npos) << never->why();
  // Counting every board free at 100 s, as they will be: 5 for jobs still running then.
  easy.textbook_easy = false;
  plan = s.Plan({units}, easy);
  EXPECT_EQ(Started(plan), (std::vector<uint64_t>{long_pair.id, long_one.id}));
  // First come, first served: the head holds everything back.
  EXPECT_TRUE(s.Plan({units}, testing_helpers::Fcfs()).starts.empty());
}

}  // namespace
}  // namespace snn
