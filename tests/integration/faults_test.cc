// Node loss with real daemons: a partitioned agent stops its tasks when its lease runs out, the
// master declares the node DOWN and requeues the job elsewhere, and a node that comes back with
// a task the master gave up has it killed (fencing). No task runs twice at once.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

#include "nodeagent/tasks/launcher.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/tcp_proxy.h"

namespace snn::testing {
namespace {

// Short enough for a test, long enough that a healthy agent on a loaded machine (two busy loops
// beside the suite) never misses its lease: a 600 ms lease did, and lost the healthy node's task.
const std::vector<std::string> kFastFailure = {
    "--heartbeat_interval_ms=100", "--heartbeat_timeout_ms=5000", "--agent_lease_ms=2500"};

class FaultsTest : public ::testing::Test {
 protected:
  // The job's first task once it runs: its node and process group.
  std::pair<std::string, pid_t> Running(uint64_t id, uint32_t attempt) {
    const v1::TaskRecord task = cluster_.WaitForRunningTask(id, attempt);
    EXPECT_NE(task.pid(), 0u) << "job " << id << " attempt " << attempt << " never ran";
    return {task.node(), static_cast<pid_t>(task.pid())};
  }

  std::string NodeState(const std::string& node) {
    auto pool = cluster_.Pool();
    if (!pool.ok()) return "";
    for (const auto& n : pool->nodes()) {
      if (n.name() == node) return n.state();
    }
    return "";
  }

  TestCluster cluster_;
};

TEST_F(FaultsTest, PartitionedNodeGoesDownItsJobRequeuesAndNothingRunsTwice) {
  cluster_.StartMaster(kFastFailure);
  TcpProxy link(cluster_.master_port());
  cluster_.StartAgent("node1", SmallBoards(),
                      {"--master=127.0.0.1:" + std::to_string(link.port())});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  ASSERT_TRUE(cluster_.Submit(ShellJob("sleep 600")).ok());
  const auto [first_node, first_pgid] = Running(1, 1);
  ASSERT_EQ(first_node, "node1");
  cluster_.StartAgent("node2", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; }));

  link.Cut();
  // The agent, cut off, stops the task when its lease runs out...
  ASSERT_TRUE(TestCluster::WaitUntil([&, pgid = first_pgid] { return !GroupExists(pgid); }, 30000));
  // ...and only then does the master give the node up and start the job again elsewhere.
  const auto [second_node, second_pgid] = Running(1, 2);
  EXPECT_EQ(second_node, "node2");
  EXPECT_FALSE(GroupExists(first_pgid)) << "two copies of the task ran at once";
  EXPECT_NE(NodeState("node1").find("DOWN"), std::string::npos) << NodeState("node1");
  auto job = cluster_.Show(1);
  EXPECT_EQ(job->requeue_count(), 1u);
  EXPECT_EQ(job->state(), v1::RUNNING);

  link.Heal();
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return NodeState("node1") == "UP"; }));
  job = cluster_.Show(1);
  EXPECT_EQ(job->attempt(), 2u) << "the returning node must not take the job back";
  EXPECT_EQ(job->tasks(0).node(), "node2");
  EXPECT_TRUE(GroupExists(second_pgid));
}

TEST_F(FaultsTest, AFrozenNodesTaskIsStoppedByItsShepherdAndTheNodeDoesNotTakeItBack) {
  cluster_.StartMaster(kFastFailure);
  cluster_.StartAgent("node1", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  ASSERT_TRUE(cluster_.Submit(ShellJob("sleep 600")).ok());
  const auto [node, pgid] = Running(1, 1);
  cluster_.StartAgent("node2", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; }));
  // A frozen agent stops nothing itself; the shepherd stops the task when the lease lapses.
  cluster_.SignalAgent(node, SIGSTOP);
  ASSERT_TRUE(TestCluster::WaitUntil([&, old = pgid] { return !GroupAlive(old); }, 30000));
  const auto [other, new_pgid] = Running(1, 2);
  EXPECT_NE(other, node);
  cluster_.SignalAgent(node, SIGCONT);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; }, 30000));
  EXPECT_TRUE(GroupAlive(new_pgid));
  EXPECT_EQ(cluster_.Show(1)->attempt(), 2u);
  EXPECT_EQ(cluster_.Show(1)->tasks(0).node(), other);
}

TEST_F(FaultsTest, ATaskCancelledWhileItsNodeWasCutOffIsKilledWhenTheNodeReturns) {
  // A long lease: the cut is over before anyone gives up on anything.
  cluster_.StartMaster(
      {"--heartbeat_interval_ms=100", "--heartbeat_timeout_ms=20000", "--agent_lease_ms=10000"});
  TcpProxy link(cluster_.master_port());
  cluster_.StartAgent("node1", SmallBoards(),
                      {"--master=127.0.0.1:" + std::to_string(link.port())});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  ASSERT_TRUE(cluster_.Submit(ShellJob("sleep 600")).ok());
  const auto [node, pgid] = Running(1, 1);
  link.Cut();
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 0; }));
  auto cancel = cluster_.Snnctl({"cancel", "1"});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_TRUE(GroupAlive(pgid)) << "nothing can reach the node yet";
  link.Heal();
  // Back, the agent reports the task running; the master knows the job is over: fenced.
  ASSERT_TRUE(TestCluster::WaitUntil([&, old = pgid] { return !GroupAlive(old); }, 30000));
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster_.Show(1);
    return job.ok() && job->tasks(0).state() == v1::TASK_KILLED;
  }));
  EXPECT_EQ(cluster_.Show(1)->state(), v1::CANCELLED);
}

TEST_F(FaultsTest, ADeadAgentsTasksStopOnTheirOwnBeforeTheJobRunsElsewhere) {
  cluster_.StartMaster(kFastFailure);
  cluster_.StartAgent("node1", SmallBoards(), {"--stop_tasks_on_exit=false"});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  ASSERT_TRUE(cluster_.Submit(ShellJob("sleep 600")).ok());
  const auto [node, pgid] = Running(1, 1);
  cluster_.StartAgent("node2", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; }));
  cluster_.SignalAgent("node1", SIGKILL);  // nobody is left on node1 to stop the task...
  // ...but its shepherd does, once the lease file goes stale.
  ASSERT_TRUE(TestCluster::WaitUntil([&, old = pgid] { return !GroupAlive(old); }, 30000));
  const auto [other, new_pgid] = Running(1, 2);
  EXPECT_EQ(other, "node2");
  EXPECT_FALSE(GroupAlive(pgid)) << "two copies of the task ran at once";
  EXPECT_TRUE(GroupAlive(new_pgid));
}

TEST_F(FaultsTest, AJobThatMayNotRequeueFailsWithTheReason) {
  cluster_.StartMaster(kFastFailure);
  TcpProxy link(cluster_.master_port());
  cluster_.StartAgent("node1", SmallBoards(),
                      {"--master=127.0.0.1:" + std::to_string(link.port())});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  auto spec = ShellJob("sleep 600");
  spec.set_no_requeue(true);
  ASSERT_TRUE(cluster_.Submit(spec).ok());
  Running(1, 1);
  link.Cut();
  ASSERT_TRUE(cluster_.WaitForState(1, v1::FAILED, 30000));
  EXPECT_NE(cluster_.Show(1)->reason().find("may not be requeued"), std::string::npos)
      << cluster_.Show(1)->reason();
}

// A job whose tasks keep dying with their agent (the crash loop a bad model once caused): each
// time, the agent comes back without it (a crash before its record was saved), the master
// requeues it, up to max_lost_requeues; the next loss fails it with the reason.
TEST_F(FaultsTest, AJobWhoseTasksKeepGettingLostFailsAfterMaxLostRequeues) {
  std::ofstream(cluster_.dir() + "/policy.yaml") << "scheduler: {max_lost_requeues: 1}\n";
  std::vector<std::string> flags = kFastFailure;
  flags.push_back("--policy_file=" + cluster_.dir() + "/policy.yaml");
  cluster_.StartMaster(flags);
  cluster_.StartAgent("node1", SmallBoards(), {"--data_dir=" + cluster_.dir() + "/node1.0"});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  ASSERT_TRUE(cluster_.Submit(ShellJob("sleep 600")).ok());
  for (uint32_t attempt = 1; attempt <= 2; ++attempt) {
    const auto [node, pgid] = Running(1, attempt);
    cluster_.SignalAgent("node1", SIGKILL);
    SignalGroup(pgid, SIGKILL);
    // Back on a fresh data dir: no record of the task, as after a crash in its launch.
    cluster_.StartAgent("node1", SmallBoards(),
                        {"--data_dir=" + cluster_.dir() + "/node1." + std::to_string(attempt)});
  }
  ASSERT_TRUE(cluster_.WaitForState(1, v1::FAILED, 30000));
  const auto job = cluster_.Show(1);
  EXPECT_EQ(job->lost_count(), 1u);
  EXPECT_EQ(job->requeue_count(), 1u);
  EXPECT_NE(job->reason().find("its tasks were lost 2 times, past max_lost_requeues (1)"),
            std::string::npos)
      << job->reason();
}

}  // namespace
}  // namespace snn::testing

namespace snn::testing {
namespace {

TEST(DrainTest, DrainedNodesAndBoardsTakeNoNewWorkAndRunningJobsFinish) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(2, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  auto ctl = [&](const std::vector<std::string>& args) { return cluster.Snnctl(args); };
  const std::string release = cluster.dir() + "/release";
  ASSERT_TRUE(
      cluster.Submit(ShellJob("while [ ! -e " + release + " ]; do sleep 0.05; done", 16)).ok());
  ASSERT_TRUE(cluster.WaitForState(1, v1::RUNNING));
  const uint32_t busy_board = cluster.Show(1)->tasks(0).board();
  const uint32_t other = 1 - busy_board;

  auto drain = ctl({"board", "drain", "node1/" + std::to_string(other), "--reason", "fan noise"});
  ASSERT_EQ(drain.exit_code, 0) << drain.err;
  EXPECT_EQ(drain.out, "Board node1/" + std::to_string(other) +
                           " drained: no new work; running jobs finish\n");
  ASSERT_TRUE(cluster.Submit(ShellJob("true", 16)).ok());  // only the drained board is free
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster.Show(2);
    return job.ok() && job->reason().find("waiting") != std::string::npos;
  }));
  EXPECT_EQ(cluster.Show(2)->state(), v1::PENDING);
  auto pool = ctl({"pool", "status"});
  EXPECT_NE(pool.out.find("DRAINED (fan noise)"), std::string::npos) << pool.out;

  // Drain the whole node: the running job goes on; the node shows DRAINING.
  ASSERT_EQ(ctl({"node", "drain", "node1", "--reason", "maintenance"}).exit_code, 0);
  pool = ctl({"pool", "status"});
  EXPECT_NE(pool.out.find("DRAINING (maintenance)"), std::string::npos) << pool.out;
  EXPECT_EQ(cluster.Show(1)->state(), v1::RUNNING);
  std::ofstream(release) << "go";
  ASSERT_TRUE(cluster.WaitForState(1, v1::COMPLETED));
  EXPECT_EQ(cluster.Show(2)->state(), v1::PENDING) << "a drained node took new work";

  // The drain survives a master restart and an agent re-registration.
  cluster.StopMaster();
  cluster.StartMaster();
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  pool = ctl({"pool", "status"});
  EXPECT_NE(pool.out.find("DRAINED (maintenance)"), std::string::npos) << pool.out;
  EXPECT_EQ(cluster.Show(2)->state(), v1::PENDING);

  ASSERT_EQ(ctl({"node", "resume", "node1"}).exit_code, 0);
  // As the drain reason prints it: node1/boardN.
  ASSERT_EQ(ctl({"board", "resume", "node1/board" + std::to_string(other)}).exit_code, 0);
  EXPECT_TRUE(cluster.WaitForState(2, v1::COMPLETED));
  EXPECT_NE(ctl({"board", "drain", "node1/7"}).err.find("has no board 7"), std::string::npos);
  EXPECT_NE(ctl({"board", "drain", "node1/boardx"}).err.find("usage: snnctl board"),
            std::string::npos);
  EXPECT_NE(ctl({"node", "drain", "ghost"}).err.find("no node named 'ghost'"), std::string::npos);
}

}  // namespace
}  // namespace snn::testing
