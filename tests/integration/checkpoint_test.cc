// Checkpoints across moves, with real daemons: two nodes share a checkpoint root, as a cluster's
// shared file system would be. A preemptible task writes a checkpoint in $SNN_CHECKPOINT_DIR,
// snnctl show lists it, an urgent job that needs its board preempts it, and its next attempt,
// on the other node's board, finds the checkpoint in the same directory with
// SNN_RESTART_COUNT=1 and resumes from it; once it succeeds the directory is gone.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

std::string Board(const std::string& type) {
  return "boards:\n  - {type: " + type + ", mesh: 4x4, neurons_per_core: 256, ksps: 1000, " +
         "streams: 4}\n";
}

TEST(CheckpointTest, APreemptedTaskResumesFromItsCheckpointOnAnotherNodesBoard) {
  TestCluster cluster;
  cluster.StartMaster({"--policy_file=" + [&] {
    const std::string path = cluster.dir() + "/policy.yaml";
    std::ofstream(path) << "scheduler: {preemption: true, preempt_grace: 1s}\n"
                           "queues:\n  - {name: default, priority: 0}\n"
                           "  - {name: urgent, priority: 10}\n";
    return path;
  }()});
  const std::string shared = cluster.dir() + "/shared-checkpoints";
  cluster.StartAgent("node1", Board("fast"), {"--checkpoint_dir=" + shared});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));

  // A first attempt writes its state and works on; a later one resumes from it and ends.
  v1::JobSpec victim = ShellJob(
      "echo \"restart $SNN_RESTART_COUNT on $SNN_NODE, checkpoints in $SNN_CHECKPOINT_DIR\"\n"
      "if [ -f \"$SNN_CHECKPOINT_DIR/state\" ]; then\n"
      "  echo \"resumed from $(cat \"$SNN_CHECKPOINT_DIR/state\")\"; exit 0\n"
      "fi\n"
      "echo step-41 > \"$SNN_CHECKPOINT_DIR/state.tmp\" && "
      "mv \"$SNN_CHECKPOINT_DIR/state.tmp\" \"$SNN_CHECKPOINT_DIR/state\"\n"
      "sleep 600\n",
      16);
  victim.set_preemptible(true);
  victim.mutable_task()->mutable_resources()->set_board_type("any");
  ASSERT_TRUE(cluster.Submit(victim).ok());
  const v1::TaskRecord first = cluster.WaitForRunningTask(1);
  ASSERT_EQ(first.node(), "node1");
  const std::string dir = shared + "/" + cluster.Show(1)->tenant() + ".job1.task0";

  // The agent sees the file and the master shows it, with its time and directory.
  CliRun show;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    show = cluster.Snnctl({"show", "1"});
    return show.out.find("Checkpoints:\n  task 0: state  written ") != std::string::npos;
  })) << show.out;
  EXPECT_NE(show.out.find("8 bytes  in " + dir + "\n"), std::string::npos) << show.out;

  // Another node, of another board type, joins; the urgent job needs node1's type.
  cluster.StartAgent("node2", Board("slow"), {"--checkpoint_dir=" + shared});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 2; }));
  v1::JobSpec urgent = ShellJob("sleep 600", 16);
  urgent.set_queue("urgent");
  urgent.mutable_task()->mutable_resources()->set_board_type("fast");
  ASSERT_TRUE(cluster.Submit(urgent).ok());

  ASSERT_TRUE(cluster.WaitForState(1, v1::COMPLETED, 30000)) << cluster.Snnctl({"show", "1"}).out;
  auto job = cluster.Show(1);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->preempt_count(), 1u);
  EXPECT_EQ(job->attempt(), 2u);
  ASSERT_EQ(job->tasks_size(), 1);
  EXPECT_EQ(job->tasks(0).node(), "node2");
  const std::string out = ReadFile(job->tasks(0).stdout_path());
  EXPECT_NE(out.find("restart 1 on node2, checkpoints in " + dir + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("resumed from step-41\n"), std::string::npos) << out;
  // Succeeded: no attempt needs the directory any more, and show no longer lists it.
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_TRUE(job->checkpoints().empty());
  EXPECT_EQ(cluster.Snnctl({"show", "1"}).out.find("Checkpoints:"), std::string::npos);
  cluster.Snnctl({"cancel", "2"});
}

}  // namespace
}  // namespace snn::testing
