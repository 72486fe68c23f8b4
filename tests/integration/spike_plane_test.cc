// The spike plane with real daemons: a job runs the example app against its model through the
// agent's gateway; the agent reports spike usage (by heartbeat while the task runs, with its end
// after) and snnctl shows it; each board type's runtime set-up reaches its tasks, also when the
// master chooses the type (board_type: any); pool status shows capacity beside measurement.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/model/model.h"
#include "snn_paths.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

std::string Boards(const std::string& type, const std::string& mesh, const std::string& firmware) {
  return "backend: sim\nboards:\n  - type: " + type + "\n    mesh: " + mesh +
         "\n    neurons_per_core: 256\n    ksps: 2000\n    streams: 8\n"
         "runtimes:\n  " +
         type + ":\n    env: {SIM_FIRMWARE: \"" + firmware +
         "\"}\n    library_paths: [\"/opt/snn/" + type + "/lib\"]\n";
}

v1::JobSpec RelayJob(const std::vector<std::string>& args = {}) {
  v1::JobSpec spec;
  spec.set_name("relay");
  spec.set_time_limit_s(60);
  auto* task = spec.mutable_task();
  task->set_command(SNN_EXAMPLE_RELAY_BIN);
  for (const auto& a : args) task->add_args(a);
  auto* r = task->mutable_resources();
  r->set_model(std::string(SNN_SOURCE_DIR) + "/etc/models/relay.json");
  auto network = LoadModelFile(r->model());  // what snnctl sends with the job
  EXPECT_TRUE(network.ok()) << network.status().ToString();
  if (network.ok()) *task->mutable_network() = *network;
  r->set_cores(3);  // snnctl derives this from the model: 3 populations of 8 neurons
  r->set_ksps(100);
  return spec;
}

TEST(SpikePlaneTest, TheExampleAppRelaysSpikesAndTheJobKeepsItsUsage) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", Boards("sim-v1", "8x8", "v1"));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_TRUE(cluster.Submit(RelayJob()).ok());
  ASSERT_TRUE(cluster.WaitForState(1, v1::COMPLETED)) << cluster.Snnctl({"show", "1"}).out;
  auto job = cluster.Show(1);
  ASSERT_TRUE(job.ok());
  const std::string out = ReadFile(job->tasks(0).stdout_path());
  EXPECT_NE(out.find("result: 8 of 8 spikes relayed"), std::string::npos) << out;
  EXPECT_NE(out.find("out[7] fired at step 23"), std::string::npos) << out;
  // Counted by the gateway, sent with the task's end, kept with the job.
  EXPECT_EQ(job->usage().injected(), 8u);
  EXPECT_EQ(job->usage().outputs(), 8u);
  EXPECT_EQ(job->usage().delivered(), 24u);
  EXPECT_EQ(job->tasks(0).usage().injected(), 8u);
  const CliRun show = cluster.Snnctl({"show", "1"});
  EXPECT_NE(show.out.find("Spikes:      injected 8, delivered 24"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("spikes injected 8"), std::string::npos) << show.out;
}

TEST(SpikePlaneTest, HeartbeatsReportARunningTasksRateWithinItsBudget) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", Boards("sim-v1", "8x8", "v1"), {"--gateway_burst_ms=20"});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_TRUE(cluster.Submit(RelayJob({"--flood", "4"})).ok());
  // While it runs, heartbeats bring its counters and its measured rate.
  double rate = 0;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster.Show(1);
    if (!job.ok() || job->state() != v1::RUNNING || job->tasks_size() == 0) return false;
    rate = job->tasks(0).usage().rate_ksps();
    return job->tasks(0).usage().injected() > 100'000 && rate > 0;
  })) << cluster.Snnctl({"show", "1"}).out;
  EXPECT_GT(rate, 60);  // generous: a shared machine; the benchmark gives the precise figure
  EXPECT_LT(rate, 140);
  ASSERT_TRUE(cluster.WaitForState(1, v1::COMPLETED)) << cluster.Snnctl({"show", "1"}).out;
  auto job = cluster.Show(1);
  EXPECT_GT(job->usage().throttled(), 0u);
  EXPECT_EQ(job->usage().rate_ksps(), 0) << "an ended task injects nothing";
  const std::string out = ReadFile(job->tasks(0).stdout_path());
  EXPECT_NE(out.find("flood: "), std::string::npos) << out;
}

TEST(SpikePlaneTest, EachBoardTypesRuntimeReachesItsTasksAlsoWhenTheMasterChooses) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", Boards("sim-v1", "4x4", "v1-firmware"));
  cluster.StartAgent("node2", Boards("sim-v2", "16x16", "v2-firmware"));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 2; }));
  const std::string script = "echo type=$SNN_BOARD_TYPE firmware=$SIM_FIRMWARE ld=$LD_LIBRARY_PATH";
  v1::JobSpec on_v1 = ShellJob(script, 4);
  on_v1.mutable_task()->mutable_resources()->set_board_type("sim-v1");
  v1::JobSpec any_big = ShellJob(script, 100);  // only the 16x16 sim-v2 board can hold it
  any_big.mutable_task()->mutable_resources()->set_board_type("any");
  (*any_big.mutable_task()->mutable_env())["LD_LIBRARY_PATH"] = "/home/me/lib";
  ASSERT_TRUE(cluster.Submit(on_v1).ok());
  ASSERT_TRUE(cluster.Submit(any_big).ok());
  ASSERT_TRUE(cluster.WaitForState(1, v1::COMPLETED));
  ASSERT_TRUE(cluster.WaitForState(2, v1::COMPLETED));
  EXPECT_EQ(ReadFile(cluster.Show(1)->tasks(0).stdout_path()),
            "type=sim-v1 firmware=v1-firmware ld=/opt/snn/sim-v1/lib\n");
  EXPECT_EQ(ReadFile(cluster.Show(2)->tasks(0).stdout_path()),
            "type=sim-v2 firmware=v2-firmware ld=/opt/snn/sim-v2/lib:/home/me/lib\n");
}

TEST(SpikePlaneTest, PoolStatusShowsMeasuredThroughputBesideCapacity) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", Boards("sim-v1", "8x8", "v1"));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  auto pool = cluster.Pool();
  ASSERT_TRUE(pool.ok());
  const auto& info = pool->nodes(0).boards(0).info();
  EXPECT_EQ(info.ksps(), 2000u);
  EXPECT_GT(info.measured_ksps(), 0u);
  EXPECT_LE(info.measured_ksps(), info.ksps()) << "a board is never measured above capacity";
  EXPECT_GT(info.latency_us(), 0u);
  const CliRun status = cluster.Snnctl({"pool", "status"});
  EXPECT_NE(status.out.find("KSPS_CAP"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("LATENCY_US"), std::string::npos) << status.out;
}

}  // namespace
}  // namespace snn::testing
