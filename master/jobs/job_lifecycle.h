// A job's life after admission, as users and agents change it: submit, cancel, hold, release
// and requeue; each task's reports (from a launch's answer, a status report, a registration);
// a node's registration (what it runs is reconciled with what the master expects) and its loss.
// Every change is written through JobWriter into the journal; what agents are told goes through
// TaskDispatch once durable. The services call this; scheduling passes are SchedulingDriver's.
// Thread contract: only on the master's io thread. Time comes from the injected Clock.
#pragma once

#include <functional>
#include <set>
#include <string>

#include "common/base/array_spec.h"
#include "common/base/clock.h"
#include "master/jobs/dependency_index.h"
#include "master/jobs/job_table.h"
#include "master/jobs/job_writer.h"
#include "master/jobs/scheduling_driver.h"
#include "master/jobs/session_index.h"
#include "master/jobs/task_dispatch.h"
#include "master/jobs/usage_recorder.h"
#include "master/metrics/master_metrics.h"
#include "master/nodes/node_registry.h"
#include "proto/node.pb.h"

namespace snn {

// A recurring job's spec checked, and its first run's time after `now` (0: the spec does not
// recur). In master/jobs/job_lifecycle_recurring.cc.
Result<int64_t> FirstRunOf(const v1::JobSpec& spec, int64_t now);

class JobLifecycle {
 public:
  JobLifecycle(JobTable& jobs, NodeRegistry& nodes, Journal& journal, JobWriter& writer,
               TaskDispatch& dispatch, DependencyIndex& dependencies, UsageRecorder& usage,
               SchedulingDriver& scheduling, const Clock& clock,
               std::function<void()> request_schedule);

  // Fills defaults, validates, checks that some board in the pool could ever hold the job, and
  // adds it PENDING. The caller commits the journal before answering.
  Result<const v1::JobRecord*> Submit(v1::JobSpec spec, const std::string& user);
  // Cancels a pending or running job; running tasks are killed once this is durable.
  Status Cancel(v1::JobRecord& job, const std::string& reason);
  // A user's hold on a pending job: it waits, saying so, until released. The caller commits.
  Status Hold(v1::JobRecord& job, const std::string& by);
  Status Release(v1::JobRecord& job);
  // An array's elements in `indices` (master/jobs/job_lifecycle_arrays.cc): those not started
  // are dropped (cancel), set aside (hold) or given back (release); started ones are cancelled
  // as jobs. Refused, changing nothing, if no element is in `indices`.
  Status CancelElements(v1::JobRecord& array, const ArrayRanges& indices,
                        const std::string& reason);
  Status HoldElements(v1::JobRecord& array, const ArrayRanges& indices, bool release);
  // A running job's tasks are stopped and it waits again (its next attempt may go elsewhere).
  Status Requeue(v1::JobRecord& job, const std::string& by);

  // Applies one task report from `node` (register, status report, launch answer).
  void ApplyTaskStatus(const std::string& node, const v1::TaskStatus& status);
  // Spike counters (and checkpoint) of a running task on `node`, from its heartbeat.
  void ApplyUsage(const std::string& node, const v1::TaskUsage& usage);
  // On (re-)registration: applies every reported task, kills what must not run, and marks lost
  // what the master expected on this node but the agent no longer has.
  void ReconcileNode(const std::string& node, const v1::RegisterRequest& request);
  // A node missed its heartbeat timeout: every task on it is lost, and its jobs requeue (or
  // fail, if they may not be requeued). Commits.
  void OnNodeDown(const std::string& node, const std::string& reason);
  // Rebuilds board reservations from the jobs' active tasks, and the sessions and their steps
  // (after loading the store). A session's keepalive counts again from now: its client could
  // not renew it while the master was down.
  void RecoverReservations();

  // Told when an experiment service ends (its tasks released), with why; in the same batch.
  void set_on_service_ended(std::function<void(const v1::JobRecord&, const std::string&)> f) {
    on_service_ended_ = std::move(f);
  }

  // Sessions (job_lifecycle_sessions.cc). A session's client says it is still there (and may
  // change its keepalive): when it must renew again by. The caller commits.
  Result<int64_t> Renew(v1::JobRecord& job, uint32_t keepalive_s);
  // Ends the sessions whose client stopped renewing, that sat idle past the policy's
  // session_idle_limit, or that reached their time limit, each with its reason. Commits.
  void ReapSessions();
  const SessionIndex& sessions() const { return sessions_; }

  // Recurring jobs (job_lifecycle_recurring.cc): each whose schedule came submits a run (a job
  // of its own, with its spec), unless its last run is still pending or running or it is held
  // (that time is skipped, and counted), and waits for the next time. Commits.
  void RunSchedules();

  // Counts submits there (nullptr: nowhere).
  void set_metrics(MasterMetrics* metrics) { metrics_ = metrics; }

 private:
  // A task's latest checkpoint as its agent saw it (an empty file: none left).
  void KeepCheckpoint(v1::JobRecord& job, uint32_t index, const v1::Checkpoint& checkpoint);
  void MoveReservation(const v1::JobRecord& job, const v1::TaskRecord& task,
                       const v1::TaskMapping& actual);
  void EndTask(v1::JobRecord& job, v1::TaskRecord& task, const v1::TaskStatus& status);
  // The job's state once `ended` stopped: failed, timed out, requeued or completed.
  // `never_ran`: the task was lost before it started (the node's fault, not the job's).
  void SettleJob(v1::JobRecord& job, const v1::TaskRecord& ended, bool never_ran = false);
  void LoseTasksOnNode(const std::string& node, const std::set<TaskId>& except,
                       const std::string& detail);
  // A step's session, checked (running, the same user's) and its resources copied into `spec`:
  // the session's global id.
  Result<uint64_t> PrepareStep(v1::JobSpec& spec, const std::string& user);
  // Starts the next waiting step on each of the session's tasks that runs none.
  void StartSteps(v1::JobRecord& session);
  // After one of `job`'s tasks ended: a stopped step gives its session task to the next; an
  // ended session stops.
  void AfterTaskEnded(v1::JobRecord& job);
  void EndSession(v1::JobRecord& session, v1::JobState to, const std::string& reason);
  // An ended session lets go of its held tasks (recording their usage) and ends its steps.
  void SessionStopped(v1::JobRecord& session, const std::string& reason);
  // Why a session must end now ("" if it need not).
  std::string SessionExpiry(const v1::JobRecord& job, int64_t now) const;
  // A run of `recurring`: a job of its own, pending.
  void SubmitRun(v1::JobRecord& recurring, int64_t now);

  // Constant after construction.
  JobTable& jobs_;
  NodeRegistry& nodes_;
  Journal& journal_;
  JobWriter& writer_;
  TaskDispatch& dispatch_;
  DependencyIndex& dependencies_;
  UsageRecorder& usage_;
  SchedulingDriver& scheduling_;
  const Clock& clock_;
  const std::function<void()> request_schedule_;
  MasterMetrics* metrics_ = nullptr;
  SessionIndex sessions_;
  std::set<uint64_t> recurring_;  // the recurring jobs (global ids) not ended
  std::function<void(const v1::JobRecord&, const std::string&)> on_service_ended_;
};

}  // namespace snn
