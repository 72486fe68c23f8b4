// The job life cycle in the master, in-process: a fake store, a manual clock, agent answers
// played by the test through ApplyTaskStatus / ReconcileNode.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/master/in_process_master.h"

namespace snn {
namespace {

class JobLifecycleTest : public InProcessMaster {
 protected:
  void SetUp() override { AddNode("n1", 2); }

  v1::JobSpec Spec(uint32_t cores, uint32_t replicas = 1) {
    v1::JobSpec spec;
    spec.set_name("j");
    spec.set_min_replicas(replicas);
    spec.mutable_task()->set_command("/bin/true");
    auto* r = spec.mutable_task()->mutable_resources();
    r->set_cores(cores);
    r->set_ksps(100);
    r->set_streams(1);
    return spec;
  }

  v1::JobRecord& SubmitAndStart(uint32_t cores, uint32_t replicas = 1) {
    auto job = components_.lifecycle.Submit(Spec(cores, replicas), "alice");
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    journal_.Commit();
    components_.scheduling.RunSchedulingPass();
    return *jobs_.Find((*job)->id());
  }

  v1::TaskStatus Report(const v1::JobRecord& job, uint32_t index, v1::TaskState state,
                        int exit_code = 0) {
    v1::TaskStatus s;
    s.set_job_id(job.id());
    s.set_index(index);
    s.set_attempt(job.attempt());
    s.set_state(state);
    s.set_exit_code(exit_code);
    return s;
  }

  uint32_t CoresUsed(const std::string& node, uint32_t board) {
    return nodes_.Find(node)->usage[board].cores;
  }
};

TEST_F(JobLifecycleTest, SubmitRejectsWhatNoBoardCanEverHold) {
  auto job = components_.lifecycle.Submit(Spec(17), "alice");  // boards have 16 cores
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("can ever hold"), std::string::npos);
  auto gang = components_.lifecycle.Submit(Spec(16, 3), "alice");  // two boards of 16
  ASSERT_FALSE(gang.ok());
  EXPECT_NE(gang.status().message().find("at most 2 replicas"), std::string::npos);
  auto pool = Spec(1);
  pool.set_pool("nowhere");
  EXPECT_NE(
      components_.lifecycle.Submit(pool, "alice").status().message().find("known pools: default"),
      std::string::npos);
  EXPECT_TRUE(jobs_.jobs().empty());
}

TEST_F(JobLifecycleTest, AdmissionSeesEveryBoardOfEveryNodeAsNodesComeAndChange) {
  EXPECT_FALSE(components_.lifecycle.Submit(Spec(16, 3), "alice").ok());  // two boards of 16
  AddNode("n2", 2);
  AddNode("n3", 2);
  EXPECT_TRUE(components_.lifecycle.Submit(Spec(16, 6), "alice").ok());  // alike boards, counted
  auto seven = components_.lifecycle.Submit(Spec(16, 7), "alice");
  ASSERT_FALSE(seven.ok());
  EXPECT_NE(seven.status().message().find("at most 6 replicas"), std::string::npos);
  // A node that registers again with a smaller board changes what can ever fit.
  AddNode("n3", 1, "sim-v1", /*side=*/2);
  EXPECT_NE(components_.lifecycle.Submit(Spec(16, 6), "alice").status().message().find("at most 4"),
            std::string::npos);
  AddNode("big", 1, "sim-v1", /*side=*/8);
  EXPECT_TRUE(components_.lifecycle.Submit(Spec(64), "alice").ok());
}

TEST_F(JobLifecycleTest, TheHealthiestBoardOfEachTypeDecidesWhatCanEverFit) {
  AddNode("worn", 1, "sim-v9", 6, /*health=*/60);                          // whole 6x6
  AddNode("fresh", 1, "sim-v9", 6, /*health=*/100, /*dead_middle=*/true);  // 6x3 at most
  auto spec = Spec(25);
  spec.mutable_task()->mutable_resources()->set_shape_width(5);
  spec.mutable_task()->mutable_resources()->set_shape_height(5);
  spec.mutable_task()->mutable_resources()->set_board_type("sim-v9");
  auto five = components_.lifecycle.Submit(spec, "alice");
  ASSERT_FALSE(five.ok());
  EXPECT_NE(five.status().message().find("sim-v9 (fresh/board0): largest live rectangle"),
            std::string::npos)
      << five.status().message();
  spec.mutable_task()->mutable_resources()->set_shape_width(6);
  spec.mutable_task()->mutable_resources()->set_shape_height(3);
  spec.mutable_task()->mutable_resources()->set_cores(18);
  EXPECT_TRUE(components_.lifecycle.Submit(spec, "alice").ok());
}

TEST_F(JobLifecycleTest, AReportWithoutAMappingKeepsTheRectangleHeldUntilTheTaskEnds) {
  v1::JobRecord& job = SubmitAndStart(8, 2);
  const std::string node = job.tasks(0).node();
  const uint32_t board = job.tasks(0).board();
  components_.lifecycle.ApplyTaskStatus(node,
                                        Report(job, 0, v1::TASK_RUNNING));  // no mapping in it
  components_.lifecycle.ApplyTaskStatus(job.tasks(1).node(), Report(job, 1, v1::TASK_RUNNING));
  EXPECT_FALSE(nodes_.Find(node)->usage[board].rects.empty());
  components_.lifecycle.ApplyTaskStatus(node, Report(job, 0, v1::TASK_EXITED, 0));
  components_.lifecycle.ApplyTaskStatus(node, Report(job, 1, v1::TASK_EXITED, 0));
  for (const auto& usage : nodes_.Find(node)->usage) {
    EXPECT_TRUE(usage.rects.empty()) << "a rectangle stayed held after its task ended";
    EXPECT_EQ(usage.cores, 0u);
  }
}

TEST_F(JobLifecycleTest, RunsToCompletionAndReleasesResources) {
  v1::JobRecord& job = SubmitAndStart(4);
  EXPECT_EQ(job.state(), v1::RUNNING);
  ASSERT_EQ(job.tasks_size(), 1);
  EXPECT_EQ(job.tasks(0).state(), v1::TASK_LAUNCHING);
  EXPECT_EQ(CoresUsed("n1", 0), 4u);
  components_.lifecycle.ApplyTaskStatus("n1", Report(job, 0, v1::TASK_RUNNING));
  EXPECT_EQ(job.tasks(0).state(), v1::TASK_RUNNING);
  clock_.AdvanceMs(5000);
  components_.lifecycle.ApplyTaskStatus("n1", Report(job, 0, v1::TASK_EXITED, 0));
  EXPECT_EQ(job.state(), v1::COMPLETED);
  EXPECT_EQ(job.end_ms() - job.start_ms(), 5000);
  EXPECT_EQ(CoresUsed("n1", 0), 0u);
}

TEST_F(JobLifecycleTest, NonZeroExitFailsAndTimeLimitTimesOut) {
  v1::JobRecord& failed = SubmitAndStart(4);
  components_.lifecycle.ApplyTaskStatus("n1", Report(failed, 0, v1::TASK_EXITED, 3));
  EXPECT_EQ(failed.state(), v1::FAILED);
  EXPECT_EQ(failed.exit_code(), 3);
  EXPECT_NE(failed.reason().find("exited with code 3"), std::string::npos);
  v1::JobRecord& slow = SubmitAndStart(4);
  components_.lifecycle.ApplyTaskStatus("n1", Report(slow, 0, v1::TASK_TIMED_OUT));
  EXPECT_EQ(slow.state(), v1::TIMEOUT);
  EXPECT_NE(slow.reason().find("time limit"), std::string::npos);
}

TEST_F(JobLifecycleTest, CancelHoldsResourcesUntilTheTaskIsGone) {
  v1::JobRecord& job = SubmitAndStart(4);
  components_.lifecycle.ApplyTaskStatus("n1", Report(job, 0, v1::TASK_RUNNING));
  ASSERT_TRUE(components_.lifecycle.Cancel(job, "cancelled by alice").ok());
  EXPECT_EQ(job.state(), v1::CANCELLED);
  EXPECT_EQ(CoresUsed("n1", 0), 4u);  // still held: the process may still be running
  components_.lifecycle.ApplyTaskStatus("n1", Report(job, 0, v1::TASK_KILLED));
  EXPECT_EQ(job.state(), v1::CANCELLED);
  EXPECT_EQ(CoresUsed("n1", 0), 0u);
  EXPECT_FALSE(components_.lifecycle.Cancel(job, "again").ok());
}

TEST_F(JobLifecycleTest, GangFailsAsAWholeWhenOneReplicaFails) {
  v1::JobRecord& job = SubmitAndStart(8, 3);
  ASSERT_EQ(job.tasks_size(), 3);
  for (uint32_t i = 0; i < 3; ++i)
    components_.lifecycle.ApplyTaskStatus("n1", Report(job, i, v1::TASK_RUNNING));
  components_.lifecycle.ApplyTaskStatus("n1", Report(job, 1, v1::TASK_EXITED, 1));
  EXPECT_EQ(job.state(), v1::FAILED);
  components_.lifecycle.ApplyTaskStatus("n1", Report(job, 0, v1::TASK_KILLED));
  components_.lifecycle.ApplyTaskStatus("n1", Report(job, 2, v1::TASK_KILLED));
  EXPECT_EQ(job.state(), v1::FAILED);
  EXPECT_EQ(CoresUsed("n1", 0) + CoresUsed("n1", 1), 0u);
}

TEST_F(JobLifecycleTest, ReRegistrationWithoutATaskRequeuesItAndFencesTheOldAttempt) {
  v1::JobRecord& job = SubmitAndStart(4);
  components_.lifecycle.ApplyTaskStatus("n1", Report(job, 0, v1::TASK_RUNNING));
  const v1::TaskStatus old_attempt = Report(job, 0, v1::TASK_RUNNING);
  v1::RegisterRequest empty;
  components_.lifecycle.ReconcileNode("n1", empty);
  EXPECT_EQ(job.state(), v1::PENDING);
  EXPECT_EQ(job.requeue_count(), 1u);
  EXPECT_NE(job.reason().find("requeued"), std::string::npos);
  components_.scheduling.RunSchedulingPass();
  EXPECT_EQ(job.state(), v1::RUNNING);
  EXPECT_EQ(job.attempt(), 2u);
  // The first attempt shows up again: it is not taken for the second.
  components_.lifecycle.ApplyTaskStatus("n1", old_attempt);
  EXPECT_EQ(job.tasks(0).state(), v1::TASK_LAUNCHING);
  EXPECT_EQ(job.attempt(), 2u);
}

// The interleaving the chaos run under load found, as the master sees it: a launch whose answer
// is lost when the agent dies, the agent back (on a new session) without the task, the job
// started again; then the first attempt heard of after all. The master never takes it for the
// new attempt, and kills it.
TEST_F(JobLifecycleTest, ALaunchUnansweredAcrossAnAgentRestartIsSettledByRegistration) {
  v1::JobRecord& job = SubmitAndStart(4);
  ASSERT_EQ(agents_.launches.size(), 1u);
  EXPECT_EQ(agents_.launches[0].request.attempt(), 1u);
  agents_.Drop(0);  // "launch ... unanswered: Connection reset by peer"
  EXPECT_EQ(job.state(), v1::RUNNING);
  EXPECT_EQ(job.tasks(0).state(), v1::TASK_LAUNCHING) << "unknown until the agent registers";
  EXPECT_EQ(CoresUsed("n1", 0) + CoresUsed("n1", 1), 4u) << "its cores stay held meanwhile";

  ++agents_.epoch;  // the restarted agent, on a new session, does not have it
  components_.lifecycle.ReconcileNode("n1", v1::RegisterRequest());
  journal_.Commit();
  EXPECT_EQ(job.state(), v1::PENDING);
  EXPECT_EQ(CoresUsed("n1", 0) + CoresUsed("n1", 1), 0u);
  components_.scheduling.RunSchedulingPass();
  ASSERT_EQ(agents_.launches.size(), 2u);
  EXPECT_EQ(agents_.launches[1].request.attempt(), 2u);

  v1::TaskStatus first = Report(job, 0, v1::TASK_RUNNING);
  first.set_attempt(1);
  components_.lifecycle.ApplyTaskStatus("n1", first);
  journal_.Commit();
  ASSERT_EQ(agents_.kills.size(), 1u);
  EXPECT_EQ(agents_.kills[0].request.attempt(), 1u);
  EXPECT_EQ(job.attempt(), 2u);
  EXPECT_EQ(job.tasks(0).state(), v1::TASK_LAUNCHING);
}

// An agent that registers again on the same session (it does after a board fault) described
// its tasks before a launch already sent on that session reached it. That launch is settled by
// its answer, not lost: lost, the job would start again beside the copy the agent is starting.
TEST_F(JobLifecycleTest, ALaunchInFlightOnTheRegisteringSessionIsNotLost) {
  v1::JobRecord& job = SubmitAndStart(4);
  ASSERT_EQ(agents_.launches.size(), 1u);
  components_.lifecycle.ReconcileNode("n1",
                                      v1::RegisterRequest());  // same session, launch in flight
  journal_.Commit();
  EXPECT_EQ(job.state(), v1::RUNNING);
  EXPECT_EQ(job.tasks(0).state(), v1::TASK_LAUNCHING);
  components_.scheduling.RunSchedulingPass();
  EXPECT_EQ(agents_.launches.size(), 1u) << "the job was started a second time";
  agents_.Answer(0, Report(job, 0, v1::TASK_RUNNING));
  EXPECT_EQ(job.tasks(0).state(), v1::TASK_RUNNING);
  EXPECT_TRUE(agents_.kills.empty());
  // Once answered, a registration without it does lose it.
  components_.lifecycle.ReconcileNode("n1", v1::RegisterRequest());
  EXPECT_EQ(job.state(), v1::PENDING);
}

TEST_F(JobLifecycleTest, ReRegistrationReportingTheTaskKeepsItRunning) {
  v1::JobRecord& job = SubmitAndStart(4);
  components_.lifecycle.ApplyTaskStatus("n1", Report(job, 0, v1::TASK_RUNNING));
  v1::RegisterRequest req;
  *req.add_tasks() = Report(job, 0, v1::TASK_RUNNING);
  components_.lifecycle.ReconcileNode("n1", req);
  EXPECT_EQ(job.state(), v1::RUNNING);
  EXPECT_EQ(job.attempt(), 1u);
  // A task that ended while the master was away is settled on registration.
  v1::RegisterRequest later;
  *later.add_tasks() = Report(job, 0, v1::TASK_EXITED, 0);
  components_.lifecycle.ReconcileNode("n1", later);
  EXPECT_EQ(job.state(), v1::COMPLETED);
}

TEST_F(JobLifecycleTest, EveryPendingJobShowsTheReasonThePassGaveIt) {
  v1::SchedulingConfig policy = DefaultSchedulingConfig();
  auto* bob = policy.add_tenants();
  bob->set_name("bob");
  bob->set_weight(1);
  auto* cap = bob->add_quotas();
  cap->set_pool("default");
  cap->set_limit(4);
  components_.scheduling.SetScheduling(policy);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 3; ++i) {
    auto job = components_.lifecycle.Submit(Spec(8), "bob");
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    ids.push_back((*job)->id());
  }
  journal_.Commit();
  components_.scheduling.RunSchedulingPass();
  for (uint64_t id : ids) {  // the second and third too, not only the head of the pool
    const v1::JobRecord& job = *jobs_.Find(id);
    ASSERT_EQ(job.state(), v1::PENDING);
    EXPECT_NE(components_.scheduling.PendingReason(job).find("tenant bob is at its limit"),
              std::string::npos)
        << "job " << id << ": " << components_.scheduling.PendingReason(job);
  }
}

TEST_F(JobLifecycleTest, AQuickPassStartsTheHeadOfTheQueueAndLeavesBackfillToTheFullPass) {
  SubmitAndStart(16);  // one of the two boards, for an hour
  auto submit = [&](uint32_t cores, uint32_t replicas, uint32_t time_limit_s, int32_t priority) {
    v1::JobSpec spec = Spec(cores, replicas);
    spec.set_time_limit_s(time_limit_s);
    spec.set_priority(priority);
    auto job = components_.lifecycle.Submit(spec, "alice");
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    journal_.Commit();
    return (*job)->id();
  };
  const uint64_t wide = submit(16, 2, 3600, 0);             // both boards: waits for the first
  EXPECT_TRUE(components_.scheduling.RunSchedulingPass());  // full: it holds the reservation
  const std::string reserved = components_.scheduling.PendingReason(*jobs_.Find(wide));
  EXPECT_NE(reserved.find("reservation"), std::string::npos) << reserved;
  // A short job could backfill the idle board; a quick pass, first come first served, leaves
  // it to the next full pass, and keeps the reasons the full pass gave.
  const uint64_t short_job = submit(4, 1, 60, 0);
  EXPECT_FALSE(components_.scheduling.RunSchedulingPass(/*head_depth=*/10));
  EXPECT_EQ(jobs_.Find(short_job)->state(), v1::PENDING);
  EXPECT_EQ(components_.scheduling.PendingReason(*jobs_.Find(wide)), reserved);
  // A job submitted since with a higher priority than the reservation's holder is merged in
  // ahead of it, and starts at once.
  const uint64_t urgent = submit(4, 1, 3600, 1000);
  EXPECT_FALSE(components_.scheduling.RunSchedulingPass(10));
  EXPECT_EQ(jobs_.Find(urgent)->state(), v1::RUNNING);
  EXPECT_EQ(jobs_.Find(short_job)->state(), v1::PENDING);
  EXPECT_TRUE(components_.scheduling.RunSchedulingPass());
  EXPECT_EQ(jobs_.Find(short_job)->state(), v1::RUNNING);
  EXPECT_EQ(jobs_.Find(wide)->state(), v1::PENDING);
}

TEST_F(JobLifecycleTest, AFailedCommitStopsTheMasterBeforeItAcknowledgesOrAppliesAnything) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string marker = ::testing::TempDir() + "/snn_failed_commit_acknowledged";
  std::filesystem::remove(marker);
  SubmitAndStart(2);
  const auto before = store_.LoadAll();
  ASSERT_TRUE(before.ok());
  // A submit whose batch the store cannot make durable: the master stops (a restart recovers
  // from the last durable state), before the answer or any launch goes out.
  EXPECT_DEATH(
      {
        store_.FailNextCommits(1);
        auto job = components_.lifecycle.Submit(Spec(2), "alice");
        journal_.Commit([&] { std::ofstream(marker) << "acknowledged\n"; });
      },
      "cannot persist state: .*injected store failure");
  EXPECT_FALSE(std::filesystem::exists(marker)) << "a failed commit was acknowledged";
  // Nothing of the failed batch is in the store: what a restarted master reads is as before.
  store_.FailNextCommits(1);
  Status committed;
  StoreBatch batch;
  batch.push_back(StoreWrite{JobKey(99), std::string("not durable")});
  store_.Commit(std::move(batch), [&](Status s) { committed = s; });
  EXPECT_EQ(committed.code(), Code::kInternal);
  EXPECT_EQ(*store_.LoadAll(), *before);
}

TEST_F(JobLifecycleTest, WithNoBoardUpAPassIsSkippedAndPendingJobsSaySo) {
  nodes_.OnSessionClosed(sessions_[0].get());
  auto job = components_.lifecycle.Submit(Spec(4), "alice");
  ASSERT_TRUE(job.ok());
  journal_.Commit();
  components_.scheduling.RunSchedulingPass();
  EXPECT_EQ((*job)->state(), v1::PENDING);
  EXPECT_EQ(components_.scheduling.PendingReason(**job),
            "no board is up: no agent has registered, or every node is down");
  AddNode("n2", 1);
  components_.scheduling.RunSchedulingPass();
  EXPECT_EQ((*job)->state(), v1::RUNNING);
}

TEST_F(JobLifecycleTest, EveryChangeIsInTheStore) {
  v1::JobRecord& running = SubmitAndStart(4);
  const uint64_t id = running.id();
  const uint64_t tenant_job_id = running.tenant_job_id();
  const std::string tenant = running.tenant();
  components_.lifecycle.ApplyTaskStatus("n1", Report(running, 0, v1::TASK_EXITED, 0));
  journal_.Commit();
  // Ended with nothing running: out of memory, into the archive, found by either id.
  EXPECT_EQ(jobs_.Find(id), nullptr);
  EXPECT_FALSE(store_.Get(JobKey(id))->has_value());
  JobArchive reloaded(store_);
  ASSERT_TRUE(reloaded.Load().ok());
  EXPECT_EQ(reloaded.Count(v1::COMPLETED), 1u);
  EXPECT_EQ(reloaded.stats().max_job_id(), id);
  auto job = reloaded.FindByTenant(tenant, tenant_job_id);
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_EQ((*job)->id(), id);
  EXPECT_EQ((*job)->state(), v1::COMPLETED);
  EXPECT_EQ((*job)->history_size(), 3);
}

TEST_F(JobLifecycleTest, ACancelledJobStaysHotUntilItsTasksHaveStopped) {
  v1::JobRecord& running = SubmitAndStart(4);
  const uint64_t id = running.id();
  ASSERT_TRUE(components_.lifecycle.Cancel(running, "cancelled by alice").ok());
  journal_.Commit();
  // Its task still runs until the kill lands: it stays hot, its board stays reserved.
  ASSERT_NE(jobs_.Find(id), nullptr);
  EXPECT_EQ(CoresUsed("n1", 0), 4u);
  EXPECT_FALSE(archive_.Find(id)->has_value());
  components_.lifecycle.ApplyTaskStatus("n1", Report(*jobs_.Find(id), 0, v1::TASK_KILLED));
  journal_.Commit();
  EXPECT_EQ(jobs_.Find(id), nullptr);
  ASSERT_TRUE(archive_.Find(id)->has_value());
  EXPECT_EQ((*archive_.Find(id))->state(), v1::CANCELLED);
  EXPECT_EQ(archive_.Count(v1::CANCELLED), 1u);
  EXPECT_EQ(jobs_.CountInState(v1::CANCELLED), 0u);
}

TEST_F(JobLifecycleTest, IdsAreNeverGivenOutAgainAfterTheirJobsWereArchived) {
  v1::JobRecord& running = SubmitAndStart(4);
  const uint64_t id = running.id();
  const uint64_t tenant_job_id = running.tenant_job_id();
  const std::string tenant = running.tenant();
  components_.lifecycle.ApplyTaskStatus("n1", Report(running, 0, v1::TASK_EXITED, 0));
  journal_.Commit();
  // A restart finds no hot job at all: the ids come from the archive's totals.
  JobTable restarted;
  JobArchive archive(store_);
  ASSERT_TRUE(archive.Load().ok());
  restarted.ReserveIds(archive.stats());
  EXPECT_GT(restarted.NextJobId(), id);
  EXPECT_GT(restarted.NextTenantJobId(tenant), tenant_job_id);
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

// Sessions (issue 37), on the manual clock: steps take their session's cores in turn, the
// reaper ends a session whose client stopped renewing, and a lost session ends its steps.
class SessionLifecycleTest : public JobLifecycleTest {
 protected:
  v1::JobRecord& StartSession(uint32_t keepalive_s = 60) {
    v1::JobSpec spec = Spec(4);
    spec.set_kind(v1::SESSION);
    spec.mutable_task()->clear_command();
    spec.set_keepalive_s(keepalive_s);
    auto job = components_.lifecycle.Submit(spec, "alice");
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    journal_.Commit();
    components_.scheduling.RunSchedulingPass();
    return *jobs_.Find((*job)->id());
  }
  // The job as it stands, in the table or (ended and committed) the archive.
  v1::JobRecord Job(uint64_t id) {
    if (const v1::JobRecord* job = jobs_.Find(id)) return *job;
    auto archived = archive_.Find(id);
    EXPECT_TRUE(archived.ok() && archived->has_value()) << id;
    return archived.ok() && archived->has_value() ? **archived : v1::JobRecord();
  }
  Result<const v1::JobRecord*> Step(const v1::JobRecord& session,
                                    const std::string& user = "alice") {
    v1::JobSpec spec;
    spec.set_kind(v1::STEP);
    spec.set_tenant(session.tenant());
    spec.set_alloc(session.tenant_job_id());
    spec.mutable_task()->set_command("/bin/true");
    auto step = components_.lifecycle.Submit(spec, user);
    journal_.Commit();
    return step;
  }
};

TEST_F(SessionLifecycleTest, StepsTakeTheSessionsCoresInTurnAndTheReaperEndsItsSteps) {
  v1::JobRecord& session = StartSession(10);
  ASSERT_EQ(session.state(), v1::RUNNING);
  EXPECT_EQ(session.tasks(0).state(), v1::TASK_RUNNING);  // held here, launched nowhere
  EXPECT_EQ(CoresUsed("n1", session.tasks(0).board()), 4u);
  EXPECT_FALSE(Step(session, "bob").ok());  // only its owner starts steps
  auto first = Step(session);
  auto second = Step(session);
  ASSERT_TRUE(first.ok() && second.ok());
  const uint64_t a = (*first)->id(), b = (*second)->id();
  EXPECT_EQ(Job(a).state(), v1::RUNNING);
  EXPECT_EQ(Job(b).state(), v1::PENDING);  // its turn comes after the first
  EXPECT_EQ(Job(a).tasks(0).mapping().rect().SerializeAsString(),
            session.tasks(0).mapping().rect().SerializeAsString());
  EXPECT_EQ(CoresUsed("n1", session.tasks(0).board()), 4u);  // the session's, not more
  components_.lifecycle.ApplyTaskStatus("n1", Report(*jobs_.Find(a), 0, v1::TASK_EXITED));
  journal_.Commit();
  EXPECT_EQ(Job(a).state(), v1::COMPLETED);
  EXPECT_EQ(Job(b).state(), v1::RUNNING);
  EXPECT_EQ(CoresUsed("n1", session.tasks(0).board()), 4u);
  EXPECT_EQ(Job(session.id()).steps(), 2u);

  // Renewed at 9 s, it lives past 10 s from its start; not renewed again, it ends at 19 s.
  clock_.AdvanceMs(9000);
  ASSERT_TRUE(components_.lifecycle.Renew(*jobs_.Find(session.id()), 0).ok());
  clock_.AdvanceMs(9999);
  components_.lifecycle.ReapSessions();
  EXPECT_EQ(Job(session.id()).state(), v1::RUNNING);
  const uint64_t session_id = session.id();  // archived once ended: `session` goes with it
  clock_.AdvanceMs(1);
  components_.lifecycle.ReapSessions();
  v1::JobRecord ended = Job(session_id);
  EXPECT_EQ(ended.state(), v1::TIMEOUT);
  EXPECT_NE(ended.reason().find("not renewed for 10s"), std::string::npos) << ended.reason();
  EXPECT_EQ(ended.tasks(0).state(), v1::TASK_KILLED);
  EXPECT_EQ(Job(b).state(), v1::CANCELLED);  // killed on its node
  EXPECT_NE(Job(b).reason().find("its session 1 ended"), std::string::npos);
  components_.lifecycle.ApplyTaskStatus("n1", Report(*jobs_.Find(b), 0, v1::TASK_KILLED));
  journal_.Commit();
  EXPECT_EQ(CoresUsed("n1", ended.tasks(0).board()), 0u);
  EXPECT_FALSE(Step(ended).ok());
  EXPECT_FALSE(components_.lifecycle.Renew(ended, 0).ok());
}

TEST_F(SessionLifecycleTest, ASessionOnANodeThatGoesDownFailsAndItsWaitingStepsAreCancelled) {
  v1::JobRecord& session = StartSession();
  const uint64_t session_id = session.id();  // `session` goes once the job is archived
  auto running = Step(session);
  auto waiting = Step(session);
  ASSERT_TRUE(running.ok() && waiting.ok());
  const uint64_t r = (*running)->id(), w = (*waiting)->id();
  v1::RegisterRequest again;  // the agent registers again, running the step: the session stays
  v1::TaskStatus step = Report(*jobs_.Find(r), 0, v1::TASK_RUNNING);
  *again.add_tasks() = step;
  components_.lifecycle.ReconcileNode("n1", again);
  journal_.Commit();
  EXPECT_EQ(Job(session_id).state(), v1::RUNNING);
  components_.lifecycle.OnNodeDown("n1", "heartbeat timeout");
  EXPECT_EQ(Job(session_id).state(), v1::FAILED);
  EXPECT_EQ(Job(r).state(), v1::CANCELLED);  // its session went first
  EXPECT_NE(Job(r).reason().find("its session 1 ended"), std::string::npos) << Job(r).reason();
  EXPECT_EQ(Job(w).state(), v1::CANCELLED);
  EXPECT_EQ(CoresUsed("n1", 0) + CoresUsed("n1", 1), 0u);
}

}  // namespace
}  // namespace snn
