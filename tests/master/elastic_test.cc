// Elastic jobs in the scheduler core: growing toward max on idle boards (never on reserved
// room, never past a quota), and extra replicas given back before anyone is preempted.
#include <gtest/gtest.h>

#include "master/sched/scheduler.h"
#include "tests/master/scheduler_scenario.h"

namespace snn {
namespace {

using testing_helpers::Board;
using testing_helpers::kMin;
using testing_helpers::Scenario;
using testing_helpers::Started;
using testing_helpers::WaitOf;

size_t GrownTasks(const SchedulePlan& plan, uint64_t job) {
  size_t n = 0;
  for (const auto& g : plan.grows) n += g.job_id == job ? g.tasks.size() : 0;
  return n;
}

// On n1..n4: an elastic job with its base replica on n1 and extras on n2 and n3, and a
// preemptible job on n4.
std::pair<SchedJob&, SchedJob&> ElasticWithTwoExtrasAndAVictim(Scenario& s) {
  SchedJob& elastic = s.Running(4, 0, 600 * kMin,
                                {{"n1", 0, Rect{0, 0, 4, 1}, 0, false},
                                 {"n2", 0, Rect{0, 0, 4, 1}, 1, true},
                                 {"n3", 0, Rect{0, 0, 4, 1}, 2, true}});
  elastic.max_replicas = 3;
  SchedJob& victim = s.Running(4, 0, 600 * kMin, {{"n4", 0, Rect{0, 0, 4, 1}}});
  victim.preemptible = true;
  return {elastic, victim};
}

TEST(ElasticTest, ARunningJobGrowsTowardItsMaxOnIdleBoardsOnly) {
  Scenario s;
  SchedJob& elastic = s.Running(4, 0, 600 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}, 0, false}});
  elastic.max_replicas = 8;
  // Three free 4-core boards and one half-used: room for four more replicas, not seven.
  s.Running(2, 0, 600 * kMin, {{"n5", 0, Rect{0, 0, 2, 1}}});
  const std::vector<BoardCapacity> boards = {Board("n1", 0, 4), Board("n2", 0, 4),
                                             Board("n3", 0, 4), Board("n4", 0, 4),
                                             Board("n5", 0, 6)};
  SchedulePlan plan = s.Plan(boards, SchedulerPolicy{}, kMin);
  ASSERT_EQ(GrownTasks(plan, elastic.id), 4u);
  for (const auto& t : plan.grows[0].tasks) EXPECT_TRUE(t.extra);
  // At its max it grows no further; a rigid job never grows.
  elastic.max_replicas = 3;
  EXPECT_EQ(GrownTasks(s.Plan(boards, SchedulerPolicy{}, kMin), elastic.id), 2u);
  elastic.max_replicas = 0;
  EXPECT_TRUE(s.Plan(boards, SchedulerPolicy{}, kMin).grows.empty());
}

TEST(ElasticTest, PendingJobsGoFirstAndReservedRoomStaysFree) {
  Scenario s;
  SchedJob& elastic = s.Running(4, 0, 600 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}, 0, false}});
  elastic.max_replicas = 8;
  s.Running(4, 0, 30 * kMin, {{"n2", 0, Rect{0, 0, 4, 1}}});  // n2 and n6 free in 30 minutes
  s.Running(4, 0, 30 * kMin, {{"n6", 0, Rect{0, 0, 4, 1}}});
  const uint64_t small = s.Pending(4, 600 * kMin).id;  // takes n3 now, for long
  const uint64_t big = s.Pending(4, 10 * kMin, 3).id;  // 3 x 4: reserves n2, n6 and n4 or n5
  const std::vector<BoardCapacity> boards = {Board("n1", 0, 4), Board("n2", 0, 4),
                                             Board("n3", 0, 4), Board("n4", 0, 4),
                                             Board("n5", 0, 4), Board("n6", 0, 4)};
  SchedulePlan plan = s.Plan(boards, SchedulerPolicy{}, kMin);
  EXPECT_EQ(Started(plan), std::vector<uint64_t>{small});
  ASSERT_NE(WaitOf(plan, big), nullptr);
  EXPECT_EQ(WaitOf(plan, big)->expected_start_ms, 30 * kMin);
  // Of n4 and n5, idle now, one is held for the big job: the elastic job takes the other.
  EXPECT_EQ(GrownTasks(plan, elastic.id), 1u);
}

TEST(ElasticTest, AGrowthStopsAtTheTenantsLimit) {
  Scenario s;
  SchedJob& elastic = s.Running(4, 0, 600 * kMin, {{"n1", 0, Rect{0, 0, 4, 1}, 0, false}});
  elastic.max_replicas = 4;
  SchedulerPolicy p;
  p.tenant_quotas[{"t", "default"}] = Quota{8, 0};
  SchedulePlan plan = s.Plan({Board("n1", 0, 4), Board("n2", 0, 4), Board("n3", 0, 4)}, p, kMin);
  EXPECT_EQ(GrownTasks(plan, elastic.id), 1u);  // 4 + 4 cores: at the limit of 8
}

TEST(ElasticTest, ExtraReplicasAreGivenBackBeforeAnyJobIsPreempted) {
  Scenario s;
  auto [elastic, victim] = ElasticWithTwoExtrasAndAVictim(s);
  SchedJob& urgent = s.Pending(4);
  urgent.tier = {10, 0};
  const std::vector<BoardCapacity> boards = {Board("n1", 0, 4), Board("n2", 0, 4),
                                             Board("n3", 0, 4), Board("n4", 0, 4)};
  SchedulerPolicy p;
  p.preempt_grace_ms = 0;
  SchedulePlan plan = s.Plan(boards, p, 60 * kMin);
  EXPECT_TRUE(plan.preemptions.empty());
  ASSERT_EQ(plan.shrinks.size(), 1u);
  EXPECT_EQ(plan.shrinks[0].job_id, elastic.id);
  EXPECT_EQ(plan.shrinks[0].tasks, std::vector<uint32_t>{2});  // the last grown, only one
  EXPECT_EQ(plan.shrinks[0].for_job, urgent.id);
  EXPECT_EQ(WaitOf(plan, urgent.id)->expected_start_ms, 60 * kMin);
  EXPECT_TRUE(plan.grows.empty()) << "a job giving back does not grow in the same pass";
  // A job of any tier gets the extras back, and without preemption too.
  urgent.tier = {0, 0};
  p.preemption = false;
  plan = s.Plan(boards, p, 60 * kMin);
  ASSERT_EQ(plan.shrinks.size(), 1u);
}

TEST(ElasticTest, AJobNeedingMoreThanTheExtrasGetsThemAllAndThenPreempts) {
  Scenario s;
  auto [elastic, victim] = ElasticWithTwoExtrasAndAVictim(s);
  SchedJob& wide = s.Pending(4, 10 * kMin, 3);
  wide.tier = {10, 0};
  SchedulerPolicy p;
  p.preempt_grace_ms = 0;
  SchedulePlan plan = s.Plan(
      {Board("n1", 0, 4), Board("n2", 0, 4), Board("n3", 0, 4), Board("n4", 0, 4)}, p, 60 * kMin);
  ASSERT_EQ(plan.shrinks.size(), 1u);
  EXPECT_EQ(plan.shrinks[0].tasks.size(), 2u);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].job_id, victim.id);
}

}  // namespace
}  // namespace snn
