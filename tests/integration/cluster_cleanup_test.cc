// The test cluster leaves nothing on the host: the task cgroups of an agent killed with a task
// running are removed when the cluster goes, whatever data dir the test gave the agent.
#include <gtest/gtest.h>
#include <signal.h>

#include "nodeagent/tasks/task_cgroups.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

TEST(ClusterCleanupTest, AKilledAgentsTaskCgroupsGoWithTheClusterWhateverItsDataDir) {
  std::string data_dir, agent_id;
  {
    TestCluster cluster;
    data_dir = cluster.dir() + "/node1.elsewhere";
    agent_id = AgentCgroupId("node1", data_dir);
    if (!TaskCgroups::Open("v1", agent_id).ok()) {
      GTEST_SKIP() << "no cgroup v1 hierarchies here: the agents make no task cgroups to leave";
    }
    cluster.StartMaster();
    cluster.StartAgent("node1", SmallBoards(), {"--data_dir=" + data_dir, "--cgroups=v1"});
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
    ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600")).ok());
    ASSERT_NE(cluster.WaitForRunningTask(1).pid(), 0u);
    cluster.SignalAgent("node1", SIGKILL);  // its task runs on, in its cgroup
    auto left = TaskCgroups::Open("v1", agent_id);
    ASSERT_TRUE(left.ok());
    ASSERT_EQ((*left)->Names().size(), 1u) << "the killed agent left no task cgroup to remove";
  }
  auto after = TaskCgroups::Open("v1", agent_id);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE((*after)->Names().empty())
      << "the cluster left the task cgroups of the agent on " << data_dir;
}

}  // namespace
}  // namespace snn::testing
