// Normalized capacity with real daemons: two board types whose measured throughput differs
// from their nominal capacity. Pool status shows each board's units (measured KSPS / the unit);
// a job asking for units with board_type any goes to a board whose measured throughput covers
// it, even where the nominal capacity of another looks larger; what no board measures enough
// for waits, saying why.
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

v1::JobSpec UnitsJob(double units) {
  v1::JobSpec spec = ShellJob("sleep 600", 1);
  auto* r = spec.mutable_task()->mutable_resources();
  r->set_ksps(0);
  r->set_units(units);
  r->set_board_type("any");
  return spec;
}

TEST(NormalizedCapacityTest, UnitJobsGoWhereMeasuredThroughputCoversThem) {
  TestCluster cluster;
  cluster.StartMaster({"--unit_ksps=1000"});
  // Board 0: 1,600 KSPS nominal, but it runs at 50%: 800 measured, 0.8 units.
  // Board 1: 2,000 KSPS, measured 2,000: 2 units.
  cluster.StartAgent("node1",
                     "boards:\n"
                     "  - {type: big, mesh: 4x4, neurons_per_core: 256, ksps: 1600, streams: 4}\n"
                     "  - {type: quick, mesh: 4x4, neurons_per_core: 256, ksps: 2000, "
                     "streams: 4}\n");
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_EQ(cluster.Snnctl({"sim", "slow-board", "node1/0", "50"}).exit_code, 0);
  auto pool = cluster.Pool();
  ASSERT_TRUE(pool.ok());
  EXPECT_DOUBLE_EQ(pool->unit_ksps(), 1000);
  EXPECT_DOUBLE_EQ(pool->nodes(0).boards(0).units(), 0.8);
  EXPECT_DOUBLE_EQ(pool->nodes(0).boards(1).units(), 2.0);
  const CliRun status = cluster.Snnctl({"pool", "status"});
  EXPECT_NE(status.out.find("1 unit = 1000 measured KSPS"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find(" 0.80 "), std::string::npos) << status.out;
  EXPECT_NE(status.out.find(" 2.00 "), std::string::npos) << status.out;

  // 1.5 units = 1,500 KSPS: only the quick board measures that much, though the big one's
  // nominal 1,600 would hold it (and fit it more tightly).
  ASSERT_TRUE(cluster.Submit(UnitsJob(1.5)).ok());
  const v1::TaskRecord first = cluster.WaitForRunningTask(1);
  EXPECT_EQ(first.board(), 1u);
  auto job = cluster.Show(1);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->spec().task().resources().ksps(), 1500u);  // its budget in measured KSPS
  EXPECT_NE(cluster.Snnctl({"show", "1"}).out.find("1500 ksps (1.5 units, on measured"),
            std::string::npos);
  // 0.7 units: the quick board has 0.5 left, the big one measures 0.8.
  ASSERT_TRUE(cluster.Submit(UnitsJob(0.7)).ok());
  EXPECT_EQ(cluster.WaitForRunningTask(2).board(), 0u);
  // 0.8 units: the big board's nominal 900 KSPS left would take it, but it measures only 100
  // free, and the quick one 500. It waits, and says why.
  ASSERT_TRUE(cluster.Submit(UnitsJob(0.8)).ok());
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto j = cluster.Show(3);
    return j.ok() && j->state() == v1::PENDING && j->reason().find("ksps") != std::string::npos;
  })) << cluster.Snnctl({"show", "3"}).out;
  // Asking for both, or neither, is refused before anything is queued.
  v1::JobSpec both = UnitsJob(1);
  both.mutable_task()->mutable_resources()->set_ksps(100);
  auto refused = cluster.Submit(both);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("give ksps or units, not both"), std::string::npos);
  for (const char* id : {"1", "2", "3"}) cluster.Snnctl({"cancel", id});
}

// Whether a job could ever run is judged on what the boards are rated for; where it goes and
// when, on what they measure now. A slowed board (or a simulated one measured on a busy host)
// makes a job wait, saying why, not refuses it as impossible; once its speed is back, the job
// runs.
TEST(NormalizedCapacityTest, ASlowedBoardMakesAJobWaitNotFailAndRunsItOnceItsSpeedIsBack) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1",
                     "boards:\n"
                     "  - {type: big, mesh: 4x4, neurons_per_core: 256, ksps: 1600, streams: 4}\n");
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_EQ(cluster.Snnctl({"sim", "slow-board", "node1/0", "50"}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto pool = cluster.Pool();
    return pool.ok() && pool->nodes(0).boards(0).info().measured_ksps() == 800;
  }));
  v1::JobSpec job = ShellJob("sleep 600", 1);
  job.mutable_task()->mutable_resources()->set_ksps(1200);
  ASSERT_TRUE(cluster.Submit(job).ok());
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto j = cluster.Show(1);
    return j.ok() && j->state() == v1::PENDING &&
           j->reason().find("node1/board0 is rated for 1600 ksps but measures 800 now") !=
               std::string::npos;
  })) << cluster.Snnctl({"show", "1"}).out;
  // Above the rating, it is refused before anything is queued.
  job.mutable_task()->mutable_resources()->set_ksps(2000);
  auto refused = cluster.Submit(job);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("can ever hold"), std::string::npos);
  ASSERT_EQ(cluster.Snnctl({"sim", "slow-board", "node1/0", "100"}).exit_code, 0);
  EXPECT_EQ(cluster.WaitForRunningTask(1).board(), 0u);
  cluster.Snnctl({"cancel", "1"});
}

}  // namespace
}  // namespace snn::testing
