// The state a scheduling pass is built from: core time accrued as jobs start and stop, the
// scheduler views kept with the job table, and copy-on-write forks of a pool's boards.
#include <gtest/gtest.h>

#include "master/jobs/job_table.h"
#include "master/sched/core_time.h"
#include "master/sched/pool_boards.h"
#include "tests/master/test_jobs.h"

namespace snn {
namespace {

TEST(CoreTimeTest, ChargesEachTenantForItsCoresUntilTheyStopEvenBetweenTakes) {
  CoreTimeAccrual a;
  a.Start("alice", 4, 1000);
  a.Start("bob", 2, 1500);
  a.Stop("alice", 4, 3000);  // ended before anyone took: still charged to its end
  auto taken = a.Take(4000);
  EXPECT_DOUBLE_EQ(taken["alice"], 4.0 * 2000);
  EXPECT_DOUBLE_EQ(taken["bob"], 2.0 * 2500);
  taken = a.Take(5000);
  EXPECT_EQ(taken.count("alice"), 0u);
  EXPECT_DOUBLE_EQ(taken["bob"], 2.0 * 1000);
  // A job read back at the master's start is charged from its own start.
  a.Start("bob", 1, 2000);
  EXPECT_DOUBLE_EQ(a.Take(6000)["bob"], 2.0 * 1000 + 1.0 * 4000);
}

TEST(SchedulerViewsTest, TheJobTableKeepsViewsOfPendingAndRunningJobsUpToDate) {
  JobTable table;
  v1::JobRecord record = testing_helpers::PendingJob(table, "default", 4, 7, 2);
  record.mutable_spec()->set_max_replicas(3);
  record.mutable_spec()->set_queue("batch");
  v1::JobRecord& job = table.Insert(std::move(record));
  table.SetQueuePriorities({{"batch", 5}});  // re-applied to the views there are
  const SchedJob* view = table.views().Find(job.id());
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->tier, std::make_pair(5, 7));
  EXPECT_TRUE(table.views().running().empty());
  for (uint32_t i = 0; i < 2; ++i) {
    auto* t = job.add_tasks();
    t->set_index(i);
    t->set_node("n1");
    t->set_board(i);
    t->set_state(v1::TASK_RUNNING);
  }
  table.SetState(job, v1::RUNNING, 1000, "started");
  ASSERT_EQ(table.views().running().size(), 1u);
  view = table.views().running()[0].job;
  EXPECT_EQ(view->replicas, 2u);
  EXPECT_EQ(view->max_replicas, 3u);
  EXPECT_EQ(view->tasks.size(), 2u);
  // A task ends: the view follows once told, and the job no longer grows.
  job.mutable_tasks(1)->set_state(v1::TASK_EXITED);
  table.TasksChanged(job, 2000);
  view = table.views().Find(job.id());
  EXPECT_EQ(view->tasks.size(), 1u);
  EXPECT_EQ(view->max_replicas, 0u);
  table.SetState(job, v1::COMPLETED, 3000, "done");
  EXPECT_EQ(table.views().Find(job.id()), nullptr);
  EXPECT_TRUE(table.views().running().empty());
}

TEST(PoolBoardsTest, AForkAndItsOriginalChangeIndependently) {
  v1::Resources r;
  r.set_cores(2);
  PoolBoards pool({testing_helpers::Board("n1", 0, 8), testing_helpers::Board("n2", 0, 8)});
  pool.Take(0, r, Rect{0, 0, 2, 1});
  PoolBoards fork = pool.Fork();
  fork.Take(0, r, Rect{2, 0, 2, 1});
  fork.GiveBack(0, r, Rect{0, 0, 2, 1});
  EXPECT_EQ(pool.board(0).current().free_count(), 6u);
  EXPECT_FALSE(pool.board(0).current().free(0, 0));
  EXPECT_TRUE(pool.board(0).current().free(2, 0));
  EXPECT_EQ(fork.board(0).current().free_count(), 6u);
  EXPECT_TRUE(fork.board(0).current().free(0, 0));
  // The original writes after the fork: the fork still sees the state it was made from.
  PoolBoards second = pool.Fork();
  pool.Take(0, r, Rect{4, 0, 2, 1});
  EXPECT_TRUE(second.board(0).current().free(4, 0));
  EXPECT_EQ(second.free_cores(), 14u);
  EXPECT_EQ(pool.free_cores(), 12u);
  EXPECT_EQ(pool.Find("n2", 0), 1u);
  EXPECT_EQ(second.Find("n3", 0), PoolBoards::npos);
}

}  // namespace
}  // namespace snn
