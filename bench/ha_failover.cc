// Failover benchmark, run by hand: an HA group of masters (--ha_etcd) on a three-member etcd
// cluster, one agent with a task that runs throughout, and a submit storm. It SIGKILLs the
// leader --kills times in a row, each time timing the takeover (from the kill to the first
// submit a new leader acknowledges), starting the killed master again as a standby, and
// waiting for the agent to be back with the new leader before the next kill. At the
// end every acknowledged job must be there exactly once, and the task must never have been
// restarted. Prints each takeover, then as its last line: `takeover median S s, max S s`.
#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/daemon/program_flags.h"
#include "nodeagent/tasks/launcher.h"
#include "tests/integration/cluster.h"
#include "tests/integration/submit_storm.h"
#include "tests/test_util/etcd_cluster.h"

DEFINE_int32(kills, 20, "how many leaders to kill in a row");
DEFINE_int32(masters, 3, "masters in the group");
DEFINE_int64(lease_s, 5, "the masters' --ha_lease_s");

namespace snn::testing {
namespace {

std::vector<double> takeovers;

TEST(HaFailover, KillTheLeaderAgainAndAgain) {
  TestCluster cluster;
  EtcdCluster etcd(cluster.dir());
  ASSERT_TRUE(etcd.Start().ok());
  const std::vector<std::string> flags = {"--ha_lease_s=" + std::to_string(FLAGS_lease_s),
                                          "--minloglevel=1"};
  std::vector<std::string> names;
  for (int i = 1; i <= FLAGS_masters; ++i) {
    names.push_back("m" + std::to_string(i));
    cluster.StartHaMaster(names.back(), etcd.endpoints(), flags);
  }
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return !cluster.HaLeader().empty(); }));
  cluster.StartAgent("node1", SmallBoards(1, 8));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 3600", 1, 7200)).ok());
  const pid_t task = static_cast<pid_t>(cluster.WaitForRunningTask(1).pid());
  ASSERT_NE(task, 0);

  SubmitStorm storm("storm-", [&] { return cluster.Client(); });
  for (int k = 1; k <= FLAGS_kills; ++k) {
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return storm.count() >= 20u * k; }, 30000));
    std::string leader;
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return !(leader = cluster.HaLeader()).empty(); }))
        << "no master answers as the leader";
    const std::string old = cluster.ha_master_address(leader);
    const auto killed = snn::MonotonicNow();
    cluster.KillHaMaster(leader);
    ASSERT_TRUE(
        TestCluster::WaitUntil([&] { return storm.FirstAckAfter(killed, old).has_value(); }, 60000))
        << "no takeover after kill " << k;
    takeovers.push_back(
        std::chrono::duration<double>(*storm.FirstAckAfter(killed, old) - killed).count());
    std::printf("kill %d (%s): takeover %.2f s, %zu jobs acknowledged so far\n", k, leader.c_str(),
                takeovers.back(), storm.count());
    std::fflush(stdout);
    cluster.StartHaMaster(leader, etcd.endpoints(), flags);
    // Settled before the next kill: the agent is back with the new leader.
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }, 30000))
        << "the agent did not come back after kill " << k;
  }
  storm.Stop();
  ExpectEveryAckedJobOnce(cluster, storm.acked());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  auto job = cluster.Show(1);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), v1::RUNNING);
  EXPECT_EQ(job->attempt(), 1u) << "the running task was restarted";
  EXPECT_TRUE(GroupExists(task)) << "the running task is gone";
  if (!::testing::Test::HasFailure()) {
    std::printf("%zu acknowledged jobs, each there exactly once; the task ran throughout\n",
                storm.count());
  }
}

}  // namespace
}  // namespace snn::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  snn::ParseProgramFlags(&argc, &argv,
                         "ha_failover [--kills=N] [--masters=N] [--lease_s=S]\n"
                         "Kills the leader of an HA group of masters again and again during a "
                         "submit storm and prints the takeover times.");
  const int failed = RUN_ALL_TESTS();
  auto& t = snn::testing::takeovers;
  if (t.empty()) return 1;
  std::sort(t.begin(), t.end());
  std::printf("takeover median %.2f s, max %.2f s over %zu kills%s\n", t[t.size() / 2], t.back(),
              t.size(), failed ? " (FAILED: see above)" : "");
  return failed;
}
