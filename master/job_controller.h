// Every change to a job's life goes through here: submit, cancel, scheduling passes that start
// jobs, task reports from agents, and reconciliation when an agent registers. It records each
// change in the Journal and defers what it tells agents (launch, kill) until that is durable.
// Thread contract: only on the master's io thread. Time comes from the injected Clock.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_set>

#include "common/clock.h"
#include "master/admission.h"
#include "master/agent_channel.h"
#include "master/billing_ledger.h"
#include "master/job_archive.h"
#include "master/job_table.h"
#include "master/master_metrics.h"
#include "master/node_registry.h"
#include "master/pass_jobs.h"
#include "master/sched/policy_config.h"
#include "master/sched/queue_order.h"
#include "master/sched/scheduler.h"
#include "master/store/journal.h"
#include "proto/node.pb.h"

namespace snn {

struct ControllerOptions {
  AdmissionLimits admission;  // defaults and limits of submitted jobs
  v1::SchedulingConfig scheduling = DefaultSchedulingConfig();
};

class JobController {
 public:
  // `agents` carries launches and kills to the nodes.
  JobController(JobTable& jobs, JobArchive& archive, NodeRegistry& nodes, AgentChannel& agents,
                Journal& journal, const Clock& clock, ControllerOptions options,
                std::function<void()> request_schedule);

  // Rebuilds board reservations from the jobs' active tasks (after loading the store).
  void RecoverReservations();
  // Moves to the archive every loaded job that has ended with no task running (a store written
  // before the archive existed keeps them with the hot jobs). Returns how many; commit after.
  size_t ArchiveFinishedJobs();

  // Fills defaults, validates, checks that some board in the pool could ever hold the job, and
  // adds it PENDING. The caller commits the journal before answering.
  Result<const v1::JobRecord*> Submit(v1::JobSpec spec, const std::string& user);
  // 1 normalized throughput unit in measured KSPS, now.
  double UnitKsps() const;
  // A gang's replica pairs and how close their boards are (ShowJobResponse.gang_links).
  std::vector<std::string> GangLinks(const v1::JobRecord& job) const;
  const ControllerOptions& options() const { return options_; }

  // Cancels a pending or running job; running tasks are killed once this is durable.
  Status Cancel(v1::JobRecord& job, const std::string& reason);

  // Applies one task report from `node` (register, status report, launch answer).
  void ApplyTaskStatus(const std::string& node, const v1::TaskStatus& status);

  // The scheduling policy in force; a new one applies from the next pass.
  const v1::SchedulingConfig& scheduling() const { return scheduling_; }
  void SetScheduling(const v1::SchedulingConfig& config);
  // Every pool some node belongs to, and every pool the policy names.
  std::set<std::string> KnownPools() const;

  // Spike counters of a running task on `node`, from its heartbeat.
  void ApplyUsage(const std::string& node, const v1::TaskUsage& usage);

  // On (re-)registration: applies every reported task, kills what must not run, and marks lost
  // what the master expected on this node but the agent no longer has.
  void ReconcileNode(const std::string& node, const v1::RegisterRequest& request);

  // A node missed its heartbeat timeout: every task on it is lost, and its jobs requeue (or
  // fail, if they may not be requeued). Commits.
  void OnNodeDown(const std::string& node, const std::string& reason);

  // Runs the scheduler over the current state, starts what it says, commits. A full pass
  // (head_depth 0) orders and considers every pending job. A quick pass considers only the
  // first `head_depth` in the order the last full pass found, with the jobs submitted since
  // merged in: first come, first served (no backfill, no growth), keeping the wait reasons the
  // full pass gave; what it cannot start waits for the next full pass. Its cost depends on
  // `head_depth` and on what changed, not on how many jobs wait. Returns whether the pass was
  // full (a quick one with no full order to start from is).
  bool RunSchedulingPass(size_t head_depth = 0);

  // Counts submits, starts, backfills, preemptions and waits there (nullptr: nowhere).
  void set_metrics(MasterMetrics* metrics) { metrics_ = metrics; }
  // Usage records and budgets: each ended task attempt is recorded there, and the tenants it
  // holds have their pending jobs wait (nullptr: no billing).
  void set_billing(BillingLedger* billing);
  // The ledger's holds changed (a credit): applies them from the next pass.
  void BudgetsChanged();

  // A user's hold on a pending job: it waits, saying so, until released. Persists; the caller
  // commits.
  Status Hold(v1::JobRecord& job, const std::string& by);
  // A running job's tasks are stopped and it waits again (its next attempt may go elsewhere).
  Status Requeue(v1::JobRecord& job, const std::string& by);
  Status Release(v1::JobRecord& job);
  // Rebuilds the after_ok index from the loaded jobs, settling what ended meanwhile (after
  // loading the store; commit after).
  void RecoverDependencies();

  // A pending job's waiting reason, as users see it.
  std::string PendingReason(const v1::JobRecord& job) const;

  // The type of the board `task` runs (or ran) on ("" if its node is unknown now).
  std::string BoardTypeOf(const v1::TaskRecord& task) const;

 private:
  // Writes `job`'s record to the journal; a job that has ended with no task left running moves
  // to the archive, and leaves memory once that is durable.
  void Persist(const v1::JobRecord& job);
  // `nominal`: each board's rated throughput rather than its measured one (whether a job could
  // ever run is a question of what the boards are, not of how they measure now).
  std::vector<BoardCapacity> SchedulableBoards(bool only_up, bool nominal = false) const;
  // Every board, up or not, in classes for admission; rebuilt when the nodes change.
  const std::vector<BoardClass>& AdmissionBoards();
  void StartJob(v1::JobRecord& job, const StartDecision& decision);
  // Adds a task on `p` to a running job and has it launched (a start, or an elastic grow).
  void AddTask(v1::JobRecord& job, const TaskPlacement& p);
  // Elastic jobs: extra replicas added on idle boards, or given back to another job.
  void GrowJob(v1::JobRecord& job, const GrowDecision& grow);
  void ShrinkJob(v1::JobRecord& job, const ShrinkDecision& shrink);
  // Stops a running job for another: requeued (counted, with the reason) or, if it may not be
  // requeued, failed.
  void Preempt(v1::JobRecord& job, const std::string& reason);
  void SendLaunch(uint64_t job_id, uint32_t index, uint32_t attempt);
  void OnLaunchAnswer(const std::string& node, uint64_t job_id, uint32_t index, uint32_t attempt,
                      const Result<v1::LaunchResponse>& answer);
  void SendKill(const std::string& node, uint64_t job_id, uint32_t index, uint32_t attempt,
                const std::string& reason);
  void KillActiveTasks(const v1::JobRecord& job, const std::string& reason);
  using TaskId = std::tuple<uint64_t, uint32_t, uint32_t>;  // job, index, attempt
  void LoseTasksOnNode(const std::string& node, const std::set<TaskId>& except,
                       const std::string& detail);
  // A task's latest checkpoint as its agent saw it (an empty file: none left).
  void KeepCheckpoint(v1::JobRecord& job, uint32_t index, const v1::Checkpoint& checkpoint);
  void MoveReservation(const v1::JobRecord& job, const v1::TaskRecord& task,
                       const v1::TaskMapping& actual);
  void EndTask(v1::JobRecord& job, v1::TaskRecord& task, const v1::TaskStatus& status);
  // Writes the usage record of a task attempt that ran and charges its tenant.
  void RecordUsage(const v1::JobRecord& job, const v1::TaskRecord& task);
  void SettleJob(v1::JobRecord& job, const v1::TaskRecord& ended);
  // after_ok (master/job_dependencies.cc): checks a new job's dependencies and notes those not
  // yet completed; indexes them; settles the dependents of a job that ended.
  Status AddDependencies(v1::JobRecord& job);
  void IndexDependencies(const v1::JobRecord& job);
  void SettleDependents(const v1::JobRecord& ended);

  // Constant after construction.
  JobTable& jobs_;
  JobArchive& archive_;
  NodeRegistry& nodes_;
  AgentChannel& agents_;
  Journal& journal_;
  const Clock& clock_;
  const ControllerOptions options_;
  std::function<void()> request_schedule_;
  MasterMetrics* metrics_ = nullptr;
  BillingLedger* billing_ = nullptr;
  // after_ok: (tenant, tenant job ID) awaited -> the global IDs of the jobs waiting on it.
  std::map<std::pair<std::string, uint64_t>, std::vector<uint64_t>> dependents_;
  bool settling_ = false;

  v1::SchedulingConfig scheduling_;
  SchedulerPolicy policy_;
  QueueOrder order_;
  std::unordered_set<uint64_t> explained_;
  bool no_board_up_ = false;  // at the last pass
  std::vector<BoardClass> admission_boards_;
  uint64_t admission_generation_ = UINT64_MAX;
  // Launches sent and not yet answered, with the node's session epoch they went on.
  std::map<TaskId, uint64_t> launches_in_flight_;  // pending jobs the last pass gave a reason
};

}  // namespace snn
