// Contiguous placement with real daemons: the master's choice of rectangle fits the agent's
// board, and a job without a contiguous region waits and says so.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "snn_paths.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

v1::JobSpec ShapedJob(uint32_t w, uint32_t h, const std::string& script = "sleep 600") {
  v1::JobSpec spec = ShellJob(script, w * h);
  spec.mutable_task()->mutable_resources()->set_shape_width(w);
  spec.mutable_task()->mutable_resources()->set_shape_height(h);
  return spec;
}

bool Overlap(const v1::CoreRect& a, const v1::CoreRect& b) {
  return a.x() < b.x() + b.width() && b.x() < a.x() + a.width() && a.y() < b.y() + b.height() &&
         b.y() < a.y() + a.height();
}

TEST(PlacementTest, TwoJobsThatFitOnlyWhenPlacedWellAreBothPlaced) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_TRUE(cluster.Submit(ShapedJob(4, 2)).ok());
  ASSERT_TRUE(cluster.Submit(ShapedJob(2, 4)).ok());  // either orientation will do
  ASSERT_TRUE(cluster.WaitForState(1, v1::RUNNING));
  ASSERT_TRUE(cluster.WaitForState(2, v1::RUNNING));
  v1::CoreRect a, b;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto j1 = cluster.Show(1), j2 = cluster.Show(2);
    if (!j1.ok() || !j2.ok() || j1->tasks(0).state() != v1::TASK_RUNNING ||
        j2->tasks(0).state() != v1::TASK_RUNNING) {
      return false;
    }
    a = j1->tasks(0).mapping().rect();
    b = j2->tasks(0).mapping().rect();
    return true;
  }));
  EXPECT_EQ(a.width() * a.height(), 8u);
  EXPECT_EQ(b.width() * b.height(), 8u);
  EXPECT_FALSE(Overlap(a, b));
  auto pool = cluster.Pool();
  EXPECT_EQ(pool->nodes(0).boards(0).cores_used(), 16u);
}

TEST(PlacementTest, ScatteredFreeCoresLeaveAFiveByFiveJobPendingWithTheReason) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(1, 8, 100000, 64));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  // Tile the 8x8 board with sixteen 2x2 jobs, then end those on a checkerboard.
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(cluster.Submit(ShapedJob(2, 2)).ok());
  std::vector<uint64_t> to_cancel;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    to_cancel.clear();
    for (uint64_t id = 1; id <= 16; ++id) {
      auto job = cluster.Show(id);
      if (!job.ok() || job->state() != v1::RUNNING || job->tasks(0).state() != v1::TASK_RUNNING) {
        return false;
      }
      const auto& r = job->tasks(0).mapping().rect();
      if ((r.x() / 2 + r.y() / 2) % 2 == 0) to_cancel.push_back(id);
    }
    return true;
  }));
  ASSERT_EQ(to_cancel.size(), 8u) << "the 2x2 jobs should tile the board";
  for (uint64_t id : to_cancel) {
    auto run = cluster.Snnctl({"cancel", std::to_string(id)});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto pool = cluster.Pool();
    return pool.ok() && pool->nodes(0).boards(0).cores_used() == 32;
  }));
  auto big = cluster.Submit(ShapedJob(5, 5, "true"));
  ASSERT_TRUE(big.ok()) << big.status().ToString();  // it fits an empty board: accepted
  std::string reason;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster.Show(big->tenant_job_id());
    reason = job.ok() ? job->reason() : "";
    return reason.find("contiguous") != std::string::npos;
  })) << reason;
  auto show = cluster.Snnctl({"show", std::to_string(big->tenant_job_id())});
  EXPECT_NE(show.out.find("State:       PENDING"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("waiting for a contiguous 5x5 region"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("32 free cores"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("largest free rectangle is 2x2"), std::string::npos) << show.out;
}

TEST(PlacementTest, TheTaskGetsItsMappingFileAndShowListsPaths) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(1, 8, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  const std::string copy = cluster.dir() + "/mapping.copy";
  ASSERT_TRUE(cluster
                  .Submit(ShapedJob(
                      3, 2, "cp $SNN_MAPPING_FILE " + copy + "; echo $SNN_CORE_RECT >> " + copy))
                  .ok());
  ASSERT_TRUE(cluster.WaitForState(1, v1::COMPLETED));
  std::ifstream in(copy);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"config_path\""), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"logical\": 5"), std::string::npos) << text.str();
  auto show = cluster.Snnctl({"show", "1"});
  EXPECT_NE(show.out.find("rectangle "), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("5 -> ("), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("0,0 > "), std::string::npos) << show.out;  // paths from the port
}

TEST(PlacementTest, ACoreKilledAtRunTimeIsNeverAllocated) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(1, 4, 1000, 8));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  auto with = [&](const std::vector<std::string>& args) { return cluster.Snnctl(args); };
  auto kill = with({"sim", "kill-core", "node1/0", "1,1"});
  ASSERT_EQ(kill.exit_code, 0) << kill.err;
  EXPECT_EQ(kill.out, "core 1,1 of node1/0 is dead\n");
  auto pool = cluster.Pool();
  ASSERT_EQ(pool->nodes(0).boards(0).info().dead_cores_size(), 1);
  EXPECT_EQ(pool->nodes(0).boards(0).cores_total(), 15u);
  // The whole board can no longer be had, and says why.
  auto whole = cluster.Submit(ShapedJob(4, 4));
  ASSERT_FALSE(whole.ok());
  const std::string& why = whole.status().message();
  EXPECT_TRUE(why.find("largest live rectangle 4x2") != std::string::npos ||
              why.find("largest live rectangle 2x4") != std::string::npos)
      << why;
  // Three 2x2 jobs fit around the dead core; none of them is given it.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cluster.Submit(ShapedJob(2, 2)).ok());
  for (uint64_t id = 1; id <= 3; ++id) {
    ASSERT_TRUE(TestCluster::WaitUntil([&] {
      auto job = cluster.Show(id);
      return job.ok() && job->tasks_size() == 1 && job->tasks(0).state() == v1::TASK_RUNNING;
    }));
    const v1::CoreRect r = cluster.Show(id)->tasks(0).mapping().rect();  // a copy: Show returns one
    const bool covers = r.x() <= 1 && 1 < r.x() + r.width() && r.y() <= 1 && 1 < r.y() + r.height();
    EXPECT_FALSE(covers) << "job " << id << " was given the dead core";
  }
  EXPECT_EQ(with({"sim", "kill-core", "node1/9", "1,1"}).exit_code, 1);
  EXPECT_NE(with({"sim", "kill-core", "nobody/0", "1,1"}).err.find("no node named"),
            std::string::npos);
}

}  // namespace
}  // namespace snn::testing

namespace snn::testing {
namespace {

TEST(PlacementTest, ModelDerivedCoresFollowTheBoardType) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1",
                     "boards:\n  - {type: small, mesh: 8x8, neurons_per_core: 100, "
                     "ksps: 1000, streams: 4}\n");
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  const std::string job = cluster.dir() + "/model_job.yaml";
  std::ofstream(job) << "task:\n  command: /bin/true\n  resources:\n    model: " SNN_SOURCE_DIR
                        "/etc/models/chain.json\n    ksps: 100\n";
  auto submit = cluster.Snnctl({"submit", job});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  auto shown = cluster.Show(1);
  ASSERT_TRUE(shown.ok());
  // chain.json: 100 + 1000 + 10 neurons at 100 per core = 1 + 10 + 1 cores.
  EXPECT_EQ(shown->spec().task().resources().cores(), 12u);
  EXPECT_NE(shown->spec().task().resources().model().find("chain.json"), std::string::npos);
  auto estimate =
      cluster.RunSnnctl({"--master", cluster.master_address(), "estimate",
                         SNN_SOURCE_DIR "/etc/models/chain.json", "--board-type", "small"});
  EXPECT_EQ(estimate.exit_code, 0) << estimate.err;
  EXPECT_NE(estimate.out.find("logical cores:    12 (small, 100 neurons per core)"),
            std::string::npos)
      << estimate.out;
}

}  // namespace
}  // namespace snn::testing
