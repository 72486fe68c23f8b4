// Agent restart: tasks outlive the agent; the next agent on the same data dir re-attaches,
// reports them, and the master keeps them RUNNING. Exit codes still arrive, through the
// shepherd's record, whether the task ends before or after the new agent starts.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

#include "nodeagent/tasks/launcher.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

const std::vector<std::string> kKeepTasks = {"--stop_tasks_on_exit=false"};

class AgentRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    cluster_.StartAgent("node1", SmallBoards(), kKeepTasks);
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }

  // A job that waits for `release` and then exits with `code`.
  pid_t StartWaitingJob(const std::string& release, int code) {
    EXPECT_TRUE(cluster_
                    .Submit(ShellJob("while [ ! -e " + release + " ]; do sleep 0.05; done; " +
                                     "exit " + std::to_string(code)))
                    .ok());
    const pid_t pgid = static_cast<pid_t>(cluster_.WaitForRunningTask(1).pid());
    EXPECT_NE(pgid, 0) << "the job never ran";
    return pgid;
  }

  TestCluster cluster_;
};

TEST_F(AgentRestartTest, TasksSurviveAnAgentRestartAndTheirExitCodeArrives) {
  const std::string release = cluster_.dir() + "/release";
  const pid_t pgid = StartWaitingJob(release, 3);
  cluster_.SignalAgent("node1", SIGKILL);  // the agent dies without warning
  cluster_.StopAgent("node1");
  EXPECT_TRUE(GroupExists(pgid)) << "the task died with its agent";
  cluster_.StartAgent("node1", SmallBoards());  // same node, same data dir
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  auto job = cluster_.Show(1);
  EXPECT_EQ(job->state(), v1::RUNNING);
  EXPECT_EQ(job->attempt(), 1u) << "re-attached, not relaunched";
  EXPECT_EQ(job->tasks(0).pid(), static_cast<uint32_t>(pgid));
  std::ofstream(release) << "go";
  ASSERT_TRUE(cluster_.WaitForState(1, v1::FAILED));
  EXPECT_EQ(cluster_.Show(1)->exit_code(), 3);
  // The killed agent's orphans belong to init now; a zombie awaiting it is not running.
  EXPECT_FALSE(GroupAlive(pgid));
}

TEST_F(AgentRestartTest, ATaskThatEndsWhileNoAgentRunsIsReportedOnReturn) {
  const std::string release = cluster_.dir() + "/release";
  const pid_t pgid = StartWaitingJob(release, 0);
  cluster_.StopAgent("node1");  // a clean stop keeps the tasks too
  ASSERT_TRUE(GroupExists(pgid));
  std::ofstream(release) << "go";
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return !GroupAlive(pgid); }));
  EXPECT_EQ(cluster_.Show(1)->state(), v1::RUNNING) << "nobody could have told the master yet";
  cluster_.StartAgent("node1", SmallBoards());
  ASSERT_TRUE(cluster_.WaitForState(1, v1::COMPLETED));
  EXPECT_EQ(cluster_.Show(1)->attempt(), 1u);
}

TEST_F(AgentRestartTest, ARejoinedTaskCanStillBeCancelled) {
  const pid_t pgid = StartWaitingJob(cluster_.dir() + "/never", 0);
  cluster_.StopAgent("node1");
  cluster_.StartAgent("node1", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  auto run = cluster_.Snnctl({"cancel", "1"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster_.Show(1);
    return job.ok() && job->tasks(0).state() == v1::TASK_KILLED;
  }));
  EXPECT_FALSE(GroupAlive(pgid)) << "the re-attached task's processes survived a cancel";
  EXPECT_EQ(cluster_.Show(1)->state(), v1::CANCELLED);
}

}  // namespace
}  // namespace snn::testing
