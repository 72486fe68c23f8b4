// A real network partition: node1's agent runs in its own network namespace, joined to the
// master's by a veth pair; taking the link down cuts it off without any FIN or RST. Skipped,
// saying why, where network namespaces cannot be created.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

#include "nodeagent/tasks/launcher.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/netns.h"

namespace snn::testing {
namespace {

TEST(NetnsPartitionTest, CutLinkMeansDownRequeueAndFencingWithoutTwoCopies) {
  Namespace net;
  if (!net.ok()) GTEST_SKIP() << "cannot create network namespaces here (needs root and iproute2)";
  TestCluster cluster;
  cluster.set_master_host(net.outer_ip());
  // A lease long enough that the healthy node2 never misses it on a loaded machine.
  cluster.StartMaster(
      {"--heartbeat_interval_ms=100", "--heartbeat_timeout_ms=5000", "--agent_lease_ms=2500"});
  cluster.StartAgent("node1", SmallBoards(), {}, net.Exec());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600")).ok());
  const pid_t first = static_cast<pid_t>(cluster.WaitForRunningTask(1).pid());
  ASSERT_NE(first, 0) << "the job never ran";
  cluster.StartAgent("node2", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 2; }));

  net.Cut();
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return !GroupExists(first); }, 30000))
      << "the cut-off agent did not stop its task";
  const pid_t second = static_cast<pid_t>(cluster.WaitForRunningTask(1, 2, 30000).pid());
  ASSERT_NE(second, 0) << "the job never ran again elsewhere";
  EXPECT_EQ(cluster.Show(1)->tasks(0).node(), "node2");
  EXPECT_FALSE(GroupExists(first)) << "two copies of the task ran at once";

  net.Heal();
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 2; }, 20000))
      << "node1 did not come back after the link was restored";
  auto job = cluster.Show(1);
  EXPECT_EQ(job->attempt(), 2u);
  EXPECT_EQ(job->tasks(0).node(), "node2");
  EXPECT_TRUE(GroupExists(second));
}

}  // namespace
}  // namespace snn::testing
