#include "master/scheduler.h"

#include <gtest/gtest.h>

#include "tests/master/test_jobs.h"

namespace snn {
namespace {

using testing_helpers::Board;
using testing_helpers::MeshBoard;
using testing_helpers::PendingJob;

TEST(SchedulerTest, StartsInPriorityThenSubmitOrder) {
  JobTable jobs;
  const uint64_t low = jobs.Insert(PendingJob(jobs, "default", 4, /*priority=*/1)).id();
  const uint64_t high = jobs.Insert(PendingJob(jobs, "default", 4, /*priority=*/5)).id();
  const uint64_t low2 = jobs.Insert(PendingJob(jobs, "default", 4, /*priority=*/1)).id();
  // Room for two of the three.
  SchedulePlan plan = PlanStarts(jobs, {Board("n1", 0, 8)}, 0);
  ASSERT_EQ(plan.starts.size(), 2u);
  EXPECT_EQ(plan.starts[0].job_id, high);
  EXPECT_EQ(plan.starts[1].job_id, low);
  ASSERT_EQ(plan.waits.size(), 1u);
  EXPECT_EQ(plan.waits[0].job_id, low2);
  EXPECT_NE(plan.waits[0].reason.find("waiting for resources"), std::string::npos);
}

TEST(SchedulerTest, FirstBoardWithEnoughOfEverything) {
  JobTable jobs;
  jobs.Insert(PendingJob(jobs, "default", 10));
  auto small = Board("n1", 0, 8);
  auto no_streams = Board("n1", 1, 64);
  no_streams.streams_free = 0;
  auto fits = Board("n2", 0, 64);
  SchedulePlan plan = PlanStarts(jobs, {small, no_streams, fits}, 0);
  ASSERT_EQ(plan.starts.size(), 1u);
  EXPECT_EQ(plan.starts[0].tasks[0].node, "n2");
}

TEST(SchedulerTest, HonoursPoolsAndBoardTypes) {
  JobTable jobs;
  auto job = PendingJob(jobs, "gpuish", 4);
  job.mutable_spec()->mutable_task()->mutable_resources()->set_board_type("sim-v2");
  jobs.Insert(job);
  SchedulePlan plan =
      PlanStarts(jobs, {Board("n1", 0, 64, "default", "sim-v2"), Board("n2", 0, 64, "gpuish")}, 0);
  EXPECT_TRUE(plan.starts.empty());
  ASSERT_EQ(plan.waits.size(), 1u);
  EXPECT_NE(plan.waits[0].reason.find("none is available"), std::string::npos);
  plan = PlanStarts(jobs, {Board("n3", 0, 64, "gpuish", "sim-v2")}, 0);
  ASSERT_EQ(plan.starts.size(), 1u);
}

TEST(SchedulerTest, GangStartsTogetherOrNotAtAllWithoutHoldingAnything) {
  JobTable jobs;
  const uint64_t gang = jobs.Insert(PendingJob(jobs, "default", 8, 5, /*replicas=*/3)).id();
  jobs.Insert(PendingJob(jobs, "default", 8, 1));
  // Room for two replicas only: the gang waits, and (no backfill) so does the job behind it.
  SchedulePlan plan = PlanStarts(jobs, {Board("n1", 0, 8), Board("n2", 0, 8)}, 0);
  EXPECT_TRUE(plan.starts.empty());
  ASSERT_EQ(plan.waits.size(), 1u);
  EXPECT_EQ(plan.waits[0].job_id, gang);
  plan = PlanStarts(jobs, {Board("n1", 0, 8), Board("n2", 0, 8), Board("n3", 0, 16)}, 0);
  ASSERT_EQ(plan.starts.size(), 2u);
  EXPECT_EQ(plan.starts[0].tasks.size(), 3u);
}

TEST(SchedulerTest, PoolsAreIndependent) {
  JobTable jobs;
  jobs.Insert(PendingJob(jobs, "a", 16));  // blocks pool a
  const uint64_t b = jobs.Insert(PendingJob(jobs, "b", 4)).id();
  SchedulePlan plan = PlanStarts(jobs, {Board("n1", 0, 8, "a"), Board("n2", 0, 8, "b")}, 0);
  ASSERT_EQ(plan.starts.size(), 1u);
  EXPECT_EQ(plan.starts[0].job_id, b);
}

TEST(SchedulerTest, PlacesRectanglesWithoutOverlapAndSaysWhenContiguityIsMissing) {
  JobTable jobs;
  auto job = [&](uint32_t w, uint32_t h) {
    auto j = PendingJob(jobs, "default", w * h);
    j.mutable_spec()->mutable_task()->mutable_resources()->set_shape_width(w);
    j.mutable_spec()->mutable_task()->mutable_resources()->set_shape_height(h);
    return jobs.Insert(j).id();
  };
  job(4, 2);
  job(4, 2);
  // Both fit on a 4x4 board only if the first goes to an edge.
  SchedulePlan plan = PlanStarts(jobs, {MeshBoard("n1", 4, 4)}, 0);
  ASSERT_EQ(plan.starts.size(), 2u);
  const Rect a = plan.starts[0].tasks[0].rect, b = plan.starts[1].tasks[0].rect;
  EXPECT_EQ(a.area(), 8u);
  EXPECT_EQ(b.area(), 8u);
  const bool overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
  EXPECT_FALSE(overlap) << a.ToString() << " " << b.ToString();

  JobTable waiting;
  auto five = PendingJob(waiting, "default", 25);
  five.mutable_spec()->mutable_task()->mutable_resources()->set_shape_width(5);
  five.mutable_spec()->mutable_task()->mutable_resources()->set_shape_height(5);
  waiting.Insert(five);
  // 8x8 with columns 1, 3, 5 and 7 held: 32 cores free, none of them in a 5x5 block.
  std::vector<Rect> held;
  for (uint32_t x = 1; x < 8; x += 2) held.push_back(Rect{x, 0, 1, 8});
  plan = PlanStarts(waiting, {MeshBoard("n1", 8, 8, held)}, 0);
  EXPECT_TRUE(plan.starts.empty());
  ASSERT_EQ(plan.waits.size(), 1u);
  EXPECT_NE(plan.waits[0].reason.find("waiting for a contiguous 5x5 region"), std::string::npos)
      << plan.waits[0].reason;
  EXPECT_NE(plan.waits[0].reason.find("32 free cores"), std::string::npos) << plan.waits[0].reason;
}

}  // namespace
}  // namespace snn
