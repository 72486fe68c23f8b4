// The test cluster leaves nothing on the host: the task cgroups of an agent killed with a task
// running are removed when the cluster goes, whatever data dir the test gave the agent.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <fstream>

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

// An agent that cannot start tasks (its cgroups gone, as an operator's cleanup or a systemd
// restart can leave it) drains its node with the reason, and the attempts it lost before they ran
// are neither billed nor counted against the job (six were billed, pushed the tenant over budget,
// and the job was failed as the one taking its nodes down).
TEST(LaunchFailureTest, ANodeThatCannotStartTasksIsDrainedAndTheJobIsNotBlamedOrBilled) {
  TestCluster cluster;
  const std::string data_dir = cluster.dir() + "/node1";
  const std::string agent_id = AgentCgroupId("node1", data_dir);
  if (!TaskCgroups::Open("v1", agent_id).ok()) {
    GTEST_SKIP() << "no cgroup v1 hierarchies here to take away from the agent";
  }
  std::ofstream(cluster.dir() + "/policy.yaml") << "scheduler: {max_lost_requeues: 1}\n";
  cluster.StartMaster({"--policy_file=" + cluster.dir() + "/policy.yaml"});
  cluster.StartAgent("node1", SmallBoards(), {"--data_dir=" + data_dir, "--cgroups=v1"});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  // The agent's cgroups go (empty while no task runs: removing them is what a cleanup does).
  { auto gone = TaskCgroups::Open("v1", agent_id); }
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600")).ok());
  std::string drained;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto pool = cluster.Pool();
    drained = pool.ok() && pool->nodes_size() == 1 && pool->nodes(0).boards_size() > 0
                  ? pool->nodes(0).boards(0).state()
                  : "";
    return drained.rfind("DRAIN", 0) == 0;
  })) << ReadFile(cluster.dir() + "/node1.log");
  EXPECT_NE(drained.find("launches fail on this node: "), std::string::npos) << drained;
  EXPECT_NE(drained.find("snnctl node resume node1"), std::string::npos) << drained;
  // The job waits to run elsewhere, not failed, not counted lost, not billed.
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster.Show(1);
    return job.ok() && job->state() == v1::PENDING;
  }));
  auto job = cluster.Show(1);
  EXPECT_EQ(job->lost_count(), 0u);
  CliRun usage = cluster.Snnctl({"usage", "--job", "1", "--csv"});
  ASSERT_EQ(usage.exit_code, 0) << usage.err;
  EXPECT_EQ(std::count(usage.out.begin(), usage.out.end(), '\n'), 1) << "billed:\n" << usage.out;
}

}  // namespace
}  // namespace snn::testing
