// Launch latency, run by hand: what a board driver in the path adds to each launch. One master
// and three agents on this host: "sim" with a simulated board in the agent (no driver), "ether"
// with a pass-through board run by snn-driver-ether on an snn-board-emu (reserved before the
// command runs, released and health-checked after it, the task isolated to its board), and
// "open", the same with --task_isolate_boards=false. Jobs of `true` go to the three in turn, one
// at a time, each timed from its submit to COMPLETED as a client watching it sees (one
// connection, asking every millisecond). Prints each kind's median and p90, and as its last
// line the medians' differences from "sim": the driver's cost and the isolation's.
#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <vector>

#include "common/base/clock.h"
#include "common/daemon/program_flags.h"
#include "common/rpc/rpc_methods.h"
#include "tests/integration/cluster.h"
#include "tests/integration/emulated_boards.h"

DEFINE_int32(jobs, 60, "jobs per kind of board");

namespace snn::testing {
namespace {

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

TEST(LaunchLatency, DriverInThePath) {
  TestCluster cluster;
  EmulatedBoards isolated(cluster.dir(), 1, "ether");
  EmulatedBoards open(cluster.dir(), 1, "open");
  ASSERT_TRUE(isolated.started() && open.started());
  cluster.StartMaster({"--minloglevel=1"});
  cluster.StartAgent("sim", SmallBoards(1, 4), {"--minloglevel=1"});
  cluster.StartAgent("ether", isolated.AgentBoards("ether-v1"), {"--minloglevel=1"});
  cluster.StartAgent("open", open.AgentBoards("open-v1"),
                     {"--minloglevel=1", "--task_isolate_boards=false"});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 3; }));

  auto client = cluster.Client("alice");
  const std::vector<std::string> kinds = {"sim-v1", "ether-v1", "open-v1"};
  std::map<std::string, std::vector<double>> ms;
  for (int i = 0; i < FLAGS_jobs * static_cast<int>(kinds.size()); ++i) {
    const std::string& kind = kinds[static_cast<size_t>(i) % kinds.size()];
    v1::SubmitRequest submit;
    *submit.mutable_spec() = ShellJob("true");
    submit.mutable_spec()->mutable_task()->mutable_resources()->set_board_type(kind);
    const Stopwatch start;
    auto submitted = client->Call(rpc::kJobSubmit, submit);
    ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
    v1::ShowJobRequest show;
    show.mutable_job()->set_tenant_job_id(submitted->tenant_job_id());
    for (;;) {
      auto job = client->Call(rpc::kJobShow, show);
      ASSERT_TRUE(job.ok()) << job.status().ToString();
      if (job->job().state() == v1::COMPLETED) break;
      ASSERT_NE(job->job().state(), v1::FAILED) << kind << ": " << job->job().reason();
      SleepRealMs(1);
    }
    ms[kind].push_back(start.Seconds() * 1000);
  }
  for (const std::string& kind : kinds) {
    std::printf("%-9s median %.1f ms, p90 %.1f ms (%zu jobs)\n", kind.c_str(),
                Percentile(ms[kind], 0.5), Percentile(ms[kind], 0.9), ms[kind].size());
  }
  const double sim = Percentile(ms["sim-v1"], 0.5);
  std::printf("driver adds %.1f ms per launch isolated, %.1f ms without isolation\n",
              Percentile(ms["ether-v1"], 0.5) - sim, Percentile(ms["open-v1"], 0.5) - sim);
}

}  // namespace
}  // namespace snn::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  snn::ParseProgramFlags(&argc, &argv, "launch_latency [--jobs=60]");
  return RUN_ALL_TESTS();
}
