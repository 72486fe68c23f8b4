// Board faults on simulated boards, with real daemons: a core that dies under a running task
// moves the task (same process, same logical cores, new physical ones); with no room the task
// is lost and its job requeued elsewhere; a failed board is drained automatically and comes
// back when healed.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "nodeagent/tasks/launcher.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

v1::JobSpec Shaped(uint32_t w, uint32_t h) {
  v1::JobSpec spec = ShellJob("sleep 600", w * h);
  spec.mutable_task()->mutable_resources()->set_shape_width(w);
  spec.mutable_task()->mutable_resources()->set_shape_height(h);
  return spec;
}

bool Contains(const v1::CoreRect& r, uint32_t x, uint32_t y) {
  return x >= r.x() && x < r.x() + r.width() && y >= r.y() && y < r.y() + r.height();
}

class BoardFaultsTest : public ::testing::Test {
 protected:
  CliRun Ctl(const std::vector<std::string>& args) { return cluster_.Snnctl(args); }
  v1::TaskRecord RunningTask(uint64_t id, uint32_t attempt) {
    v1::TaskRecord task = cluster_.WaitForRunningTask(id, attempt);
    EXPECT_NE(task.pid(), 0u) << "job " << id << " attempt " << attempt << " never ran";
    return task;
  }
  TestCluster cluster_;
};

TEST_F(BoardFaultsTest, ADeadCoreUnderARunningTaskMovesItWithTheSameLogicalCores) {
  cluster_.StartMaster();
  cluster_.StartAgent("node1", SmallBoards(1, 8, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  ASSERT_TRUE(cluster_.Submit(Shaped(2, 2)).ok());
  const v1::TaskRecord before = RunningTask(1, 1);
  const v1::CoreRect old = before.mapping().rect();
  auto kill =
      Ctl({"sim", "kill-core", "node1/0", std::to_string(old.x()) + "," + std::to_string(old.y())});
  ASSERT_EQ(kill.exit_code, 0) << kill.err;
  EXPECT_NE(kill.out.find("job 1 task 0 moved to 2x2@"), std::string::npos) << kill.out;
  v1::TaskRecord after;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster_.Show(1);
    if (!job.ok()) return false;
    after = job->tasks(0);
    return !Contains(after.mapping().rect(), old.x(), old.y());
  })) << "the master never learnt the new place";
  EXPECT_EQ(after.pid(), before.pid()) << "the task was restarted, not moved";
  EXPECT_TRUE(GroupAlive(static_cast<pid_t>(after.pid())));
  EXPECT_EQ(cluster_.Show(1)->state(), v1::RUNNING);
  EXPECT_EQ(cluster_.Show(1)->attempt(), 1u);
  ASSERT_EQ(after.mapping().cores_size(), 4);
  std::ifstream in(after.mapping().mapping_file());
  std::stringstream text;
  text << in.rdbuf();
  const auto& c3 = after.mapping().cores(3);
  EXPECT_NE(text.str().find("\"logical\": 3, \"x\": " + std::to_string(c3.x()) +
                            ", \"y\": " + std::to_string(c3.y())),
            std::string::npos)
      << text.str();
  // The board's health fell; one dead core is not enough to drain it.
  auto pool = cluster_.Pool();
  EXPECT_EQ(pool->nodes(0).boards(0).info().health(), 90u);
  EXPECT_EQ(pool->nodes(0).boards(0).state(), "UP");
}

TEST_F(BoardFaultsTest, WithNoRoomToMoveTheTaskIsLostAndItsJobRunsElsewhere) {
  cluster_.StartMaster();
  cluster_.StartAgent("node1", SmallBoards(1, 2, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  ASSERT_TRUE(cluster_.Submit(Shaped(2, 2)).ok());
  const v1::TaskRecord first = RunningTask(1, 1);
  cluster_.StartAgent("node2", SmallBoards(1, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; }));
  auto kill = Ctl({"sim", "kill-core", "node1/0", "1,1"});
  ASSERT_EQ(kill.exit_code, 0) << kill.err;
  EXPECT_NE(kill.out.find("no room to move job 1 task 0"), std::string::npos) << kill.out;
  const v1::TaskRecord second = RunningTask(1, 2);
  EXPECT_EQ(second.node(), "node2");
  EXPECT_FALSE(GroupAlive(static_cast<pid_t>(first.pid())));
  auto history = cluster_.Show(1)->history();
  bool requeued = false;
  for (const auto& h : history) requeued |= h.reason().find("died under it") != std::string::npos;
  EXPECT_TRUE(requeued) << "the requeue should say why";
}

TEST_F(BoardFaultsTest, AFailedBoardIsDrainedAutomaticallyAndComesBackWhenHealed) {
  cluster_.StartMaster();
  cluster_.StartAgent("node1", SmallBoards(2, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  ASSERT_TRUE(cluster_.Submit(Shaped(4, 4)).ok());
  const v1::TaskRecord first = RunningTask(1, 1);
  const std::string failed = "node1/" + std::to_string(first.board());
  auto fail = Ctl({"sim", "fail-board", failed});
  ASSERT_EQ(fail.exit_code, 0) << fail.err;
  EXPECT_NE(fail.out.find("1 tasks on it stopped"), std::string::npos) << fail.out;
  const v1::TaskRecord second = RunningTask(1, 2);  // requeued to the other board
  EXPECT_NE(second.board(), first.board());
  auto pool = Ctl({"pool", "status"});
  EXPECT_NE(pool.out.find("DRAINED (automatic: health 0 is below 50)"), std::string::npos)
      << pool.out;
  ASSERT_EQ(Ctl({"sim", "heal-board", failed}).exit_code, 0);
  pool = Ctl({"pool", "status"});
  EXPECT_EQ(pool.out.find("automatic"), std::string::npos) << pool.out;
  auto status = cluster_.Pool();
  EXPECT_EQ(status->nodes(0).boards(first.board()).info().health(), 100u);
}

}  // namespace
}  // namespace snn::testing

namespace snn::testing {
namespace {

TEST(SlowBoardTest, ABoardFarSlowerThanItsPeersLosesHealthIsDrainedAndComesBack) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(3, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  auto ctl = [&](const std::vector<std::string>& args) { return cluster.Snnctl(args); };
  // Boards are named as reasons print them (node1/board2) or short (node1/2).
  auto slow = ctl({"sim", "slow-board", "node1/board2", "20"});
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  EXPECT_EQ(slow.out, "board node1/2 now runs at 20% of its capacity\n");
  auto pool = cluster.Pool();
  const auto& board = pool->nodes(0).boards(2);
  EXPECT_EQ(board.info().measured_ksps(), 200u);
  EXPECT_EQ(board.info().health(), 20u);  // 200 against its peers' 1000
  EXPECT_EQ(board.state(), "DRAINED (automatic: health 20 is below 50)");
  EXPECT_EQ(pool->nodes(0).boards(0).state(), "UP");
  // A mild slowdown (60%) is within half of the peers: no change.
  ASSERT_EQ(ctl({"sim", "slow-board", "node1/1", "60"}).exit_code, 0);
  EXPECT_EQ(cluster.Pool()->nodes(0).boards(1).info().health(), 100u);
  ASSERT_EQ(ctl({"sim", "heal-board", "node1/2"}).exit_code, 0);
  pool = cluster.Pool();
  EXPECT_EQ(pool->nodes(0).boards(2).info().health(), 100u);
  EXPECT_EQ(pool->nodes(0).boards(2).state(), "UP");
}

}  // namespace
}  // namespace snn::testing
