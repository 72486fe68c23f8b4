// Scheduling policy with real daemons: a high-priority job preempts a preemptible one, which
// requeues (counted, with the reason) and later completes; a tenant at its quota waits while
// another tenant's job runs, and nonsense quota changes are refused; a 3-replica gang does not
// start on room for 2 and holds nothing meanwhile; an elastic job grows on idle boards and
// gives an extra replica back to a job that needs the room, and still completes; a pending job
// shows the priority factors of the last pass, and every pending job its forecast start.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

std::string WritePolicy(const TestCluster& cluster, const std::string& yaml) {
  const std::string path = cluster.dir() + "/policy.yaml";
  std::ofstream(path) << yaml;
  return path;
}

TEST(SchedulingTest, AnUrgentJobPreemptsAPreemptibleOneWhichRequeuesAndLaterCompletes) {
  TestCluster cluster;
  const std::string policy = WritePolicy(cluster, R"(
scheduler: {preemption: true, preempt_grace: 1s}
queues:
  - {name: default, priority: 0}
  - {name: urgent, priority: 10}
)");
  cluster.StartMaster({"--policy_file=" + policy});
  cluster.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  // The whole board; on its second attempt it finishes at once.
  v1::JobSpec victim = ShellJob("if [ \"$SNN_ATTEMPT\" -gt 1 ]; then exit 0; fi; sleep 600", 16);
  victim.set_preemptible(true);
  ASSERT_TRUE(cluster.Submit(victim).ok());
  ASSERT_NE(cluster.WaitForRunningTask(1).pid(), 0u);
  v1::JobSpec urgent = ShellJob("sleep 1", 16);
  urgent.set_queue("urgent");
  ASSERT_TRUE(cluster.Submit(urgent).ok());

  ASSERT_TRUE(cluster.WaitForState(2, v1::COMPLETED, 30000)) << cluster.Snnctl({"show", "2"}).out;
  ASSERT_TRUE(cluster.WaitForState(1, v1::COMPLETED, 30000)) << cluster.Snnctl({"show", "1"}).out;
  auto job = cluster.Show(1);
  EXPECT_EQ(job->preempt_count(), 1u);
  EXPECT_EQ(job->requeue_count(), 1u);
  EXPECT_EQ(job->attempt(), 2u);
  bool requeued = false;
  for (const auto& h : job->history()) {
    requeued |= h.to() == v1::PENDING && h.reason() == "requeued: preempted by job 2";
  }
  EXPECT_TRUE(requeued) << cluster.Snnctl({"show", "1"}).out;
  // The urgent job started only once the victim's cores were free: it ended before the
  // victim's second attempt started.
  auto urgent_job = cluster.Show(2);
  EXPECT_LE(urgent_job->end_ms(), job->start_ms());

  // A job that is not preemptible is never preempted.
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600", 16)).ok());
  ASSERT_NE(cluster.WaitForRunningTask(3).pid(), 0u);
  ASSERT_TRUE(cluster.Submit(urgent).ok());
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto j = cluster.Show(4);
    return j.ok() && j->reason().find("waiting for") != std::string::npos;
  }));
  EXPECT_EQ(cluster.Show(3)->state(), v1::RUNNING);
  EXPECT_EQ(cluster.Show(3)->preempt_count(), 0u);
}

TEST(SchedulingTest, ATenantAtItsQuotaWaitsWhileAnotherRunsAndNonsenseChangesAreRefused) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  const CliRun set = cluster.Snnctl({"tenant", "set", "alice", "--create", "--pool", "default",
                                     "--limit", "4", "--guaranteed", "2"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(set.out, "tenant alice: weight 1; pool default: limit 4, guaranteed 2\n");
  const CliRun policy_before = cluster.Snnctl({"policy", "show"});
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"tenant", "set", "alice", "--pool", "default", "--guaranteed", "8"},
           {"tenant", "set", "alice", "--pool", "default", "--limit", "-1"},
           {"tenant", "set", "alice", "--pool", "nowhere", "--limit", "4"},
           {"tenant", "set", "carol", "--weight", "2"},
           {"queue", "set", "default", "--pool", "default", "--max", "2", "--guaranteed", "3"}}) {
    const CliRun r = cluster.Snnctl(bad);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_EQ(cluster.Snnctl({"policy", "show"}).out, policy_before.out) << "nothing changed";

  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600", 4), "alice").ok());
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600", 4), "alice").ok());
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600", 4), "bob").ok());
  ASSERT_TRUE(cluster.WaitForState(1, v1::RUNNING));
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto b = cluster.Show(1, "bob");
    return b.ok() && b->state() == v1::RUNNING;
  }));
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto a2 = cluster.Show(2, "alice");
    return a2.ok() && a2->reason().find("tenant alice is at its limit") != std::string::npos;
  })) << cluster.Snnctl({"show", "2"}, "alice").out;
  EXPECT_EQ(cluster.Show(2, "alice")->state(), v1::PENDING);
  // Raising the limit lets it start.
  ASSERT_EQ(
      cluster.Snnctl({"tenant", "set", "alice", "--pool", "default", "--limit", "8"}).exit_code, 0);
  EXPECT_TRUE(cluster.WaitForState(2, v1::RUNNING));
}

TEST(SchedulingTest, AThreeReplicaGangDoesNotStartOnRoomForTwo) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(3, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  // One board busy for a few seconds: room for two replicas only.
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 3", 16)).ok());
  const v1::TaskRecord busy = cluster.WaitForRunningTask(1);
  ASSERT_NE(busy.pid(), 0u);
  v1::JobSpec gang = ShellJob("sleep 1", 16);
  gang.set_min_replicas(3);
  gang.set_max_replicas(3);
  auto submitted = cluster.Submit(gang);
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto j = cluster.Show(2);
    return j.ok() && j->reason().find("3 replicas") != std::string::npos;
  })) << cluster.Snnctl({"show", "2"}).out;
  auto pool = cluster.Pool();
  for (const auto& b : pool->nodes(0).boards()) {
    if (b.info().index() != busy.board()) {
      EXPECT_EQ(b.cores_used(), 0u) << "no partial hold";
    }
  }
  EXPECT_EQ(cluster.Show(2)->tasks_size(), 0);
  EXPECT_EQ(cluster.Show(2)->state(), v1::PENDING);
  // Once the board frees, all three start together.
  ASSERT_TRUE(cluster.WaitForState(2, v1::COMPLETED, 30000)) << cluster.Snnctl({"show", "2"}).out;
  auto job = cluster.Show(2);
  ASSERT_EQ(job->tasks_size(), 3);
  EXPECT_EQ(job->attempt(), 1u);
  EXPECT_GE(job->start_ms(), cluster.Show(1)->end_ms());
}

TEST(SchedulingTest, AnElasticJobGrowsOnIdleBoardsAndGivesAReplicaBackForAnotherJob) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(3, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  const std::string done = cluster.dir() + "/done";
  v1::JobSpec elastic = ShellJob("while [ ! -e " + done + " ]; do sleep 0.05; done", 16, 120);
  elastic.set_min_replicas(1);
  elastic.set_max_replicas(3);
  ASSERT_TRUE(cluster.Submit(elastic).ok());
  auto active = [&](uint64_t id) {
    auto j = cluster.Show(id);
    int n = 0;
    if (j.ok()) {
      for (const auto& t : j->tasks()) n += t.state() == v1::TASK_RUNNING ? 1 : 0;
    }
    return n;
  };
  // Alone on three boards, it grows to its max of three replicas.
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return active(1) == 3; }))
      << cluster.Snnctl({"show", "1"}).out;
  // Another job needs a whole board: an extra replica is given back, and it runs.
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 0.5", 16)).ok());
  ASSERT_TRUE(cluster.WaitForState(2, v1::COMPLETED, 30000)) << cluster.Snnctl({"show", "2"}).out;
  auto job = cluster.Show(1);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), v1::RUNNING);
  int given_back = 0;
  for (const auto& t : job->tasks()) {
    if (!t.given_back()) continue;
    ++given_back;
    EXPECT_GE(t.index(), 1u) << "only an extra replica is given back";
    EXPECT_EQ(t.detail(), "extra replica given back for job 2");
  }
  EXPECT_EQ(given_back, 1) << cluster.Snnctl({"show", "1"}).out;
  // The replicas it still runs finish normally: the job completes.
  std::ofstream(done) << "";
  ASSERT_TRUE(cluster.WaitForState(1, v1::COMPLETED, 30000)) << cluster.Snnctl({"show", "1"}).out;
  // A job winding down does not grow again: three replicas, the one given back, and at most
  // one regrown on the board job 2 left.
  EXPECT_LE(cluster.Show(1)->tasks_size(), 5);
}

}  // namespace
}  // namespace snn::testing

namespace snn::testing {
namespace {

// The factors a pass works out for a pending job reach `snnctl show` and `snnctl jobs
// --priority`; a running job shows none.
TEST(SchedulingTest, APendingJobShowsThePriorityFactorsOfTheLastPass) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600", 16)).ok());  // the whole board
  ASSERT_NE(cluster.WaitForRunningTask(1).pid(), 0u);
  ASSERT_TRUE(cluster.Submit(ShellJob("exit 0", 16)).ok());
  v1::JobRecord waiting;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster.Show(2);
    if (!job.ok()) return false;
    waiting = *job;
    return waiting.priority().total() > 0;
  })) << "no pass worked out job 2's priority";
  // Fair share is 2^(-usage share / weight share): above 0 and at most 1.
  EXPECT_GT(waiting.priority().fairshare(), 0);
  EXPECT_LE(waiting.priority().fairshare(), 1);
  EXPECT_FALSE(waiting.priority().starving());
  EXPECT_FALSE(cluster.Show(1)->has_priority()) << "a running job has no pending priority";
  auto table = cluster.Snnctl({"jobs", "--priority", "--state", "PENDING"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  char fairshare[32];
  snprintf(fairshare, sizeof fairshare, "%.3f", waiting.priority().fairshare());
  EXPECT_NE(table.out.find(fairshare), std::string::npos) << table.out;
}

}  // namespace
}  // namespace snn::testing

namespace snn::testing {
namespace {

// `snnctl jobs --start` on a live cluster: each pending job starts when the plan, carried
// forward from the running jobs' limits (no history: no job of this user has ended), starts it;
// a held job has none.
TEST(SchedulingTest, EveryPendingJobHasItsForecastStartFromThePlanCarriedForward) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600", 16, 600)).ok());  // the whole board
  ASSERT_NE(cluster.WaitForRunningTask(1).pid(), 0u);
  const int64_t started = cluster.Show(1)->start_ms();
  ASSERT_TRUE(cluster.Submit(ShellJob("exit 0", 16, 60)).ok());  // after job 1
  ASSERT_TRUE(cluster.Submit(ShellJob("exit 0", 8, 120)).ok());  // after job 2
  ASSERT_TRUE(cluster.Submit(ShellJob("exit 0", 4, 60)).ok());   // held
  ASSERT_EQ(cluster.Snnctl({"hold", "4"}).exit_code, 0);
  v1::JobRecord third;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster.Show(3);
    if (!job.ok()) return false;
    third = *job;
    return third.forecast_start_ms() > 0;
  })) << cluster.Snnctl({"show", "3"}).out;
  EXPECT_EQ(third.forecast_basis(), "plan");
  EXPECT_EQ(third.forecast_start_ms(), started + 660'000) << "job 1's limit, then job 2's";
  EXPECT_EQ(cluster.Show(2)->forecast_start_ms(), started + 600'000);
  EXPECT_EQ(cluster.Show(4)->forecast_basis(), "held");
  EXPECT_EQ(cluster.Show(4)->forecast_start_ms(), 0);
  EXPECT_EQ(cluster.Show(1)->forecast_basis(), "") << "a running job has no forecast";
  auto table = cluster.Snnctl({"jobs", "--start"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("START"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" plan"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" held"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("sleep 600"), std::string::npos) << "pending jobs only";
  // Job 2 comes before job 3 (sorted by start), job 4 (none) last.
  EXPECT_LT(table.out.find("\n2 "), table.out.find("\n3 ")) << table.out;
  EXPECT_LT(table.out.find("\n3 "), table.out.find("\n4 ")) << table.out;
  auto both = cluster.Snnctl({"jobs", "--start", "--priority"});
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_NE(both.err.find("different views of the jobs; give one"), std::string::npos) << both.err;
  auto shown = cluster.Snnctl({"show", "3"});
  EXPECT_NE(shown.out.find("Forecast:"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("; plan)"), std::string::npos) << shown.out;
}

}  // namespace
}  // namespace snn::testing
