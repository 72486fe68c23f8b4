#include "master/jobs/job_lifecycle.h"

#include <glog/logging.h>

#include <algorithm>
#include <vector>

#include "common/base/duration.h"
#include "common/base/utc_time.h"
#include "master/billing/usage_accounting.h"
#include "master/jobs/job_arrays.h"
#include "master/jobs/usage_limits.h"

namespace snn {
namespace {

std::string Where(const v1::TaskRecord& task) {
  return task.node() + "/board" + std::to_string(task.board());
}

}  // namespace

JobLifecycle::JobLifecycle(JobTable& jobs, NodeRegistry& nodes, Journal& journal, JobWriter& writer,
                           TaskDispatch& dispatch, DependencyIndex& dependencies,
                           UsageRecorder& usage, SchedulingDriver& scheduling, const Clock& clock,
                           std::function<void()> request_schedule)
    : jobs_(jobs),
      nodes_(nodes),
      journal_(journal),
      writer_(writer),
      dispatch_(dispatch),
      dependencies_(dependencies),
      usage_(usage),
      scheduling_(scheduling),
      clock_(clock),
      request_schedule_(std::move(request_schedule)) {}

Result<const v1::JobRecord*> JobLifecycle::Submit(v1::JobSpec submitted, const std::string& user) {
  uint64_t session_id = 0;
  if (submitted.kind() == v1::STEP) {
    if (submitted.hold()) {
      return InvalidArgument(
          "a step cannot be submitted held: it waits only for its session's "
          "previous step");
    }
    auto session = PrepareStep(submitted, user);
    if (!session.ok()) return session.status();
    session_id = *session;
  }
  auto admitted = scheduling_.Admit(std::move(submitted), user);
  if (!admitted.ok()) return admitted.status();
  v1::JobSpec spec = std::move(*admitted);
  SNN_RETURN_IF_ERROR(CheckArraySpec(spec));
  SNN_RETURN_IF_ERROR(CheckUsageLimits(spec, scheduling_.scheduling(),
                                       jobs_.submitted().OfUser(spec.user()),
                                       jobs_.submitted().OfTenant(spec.tenant())));
  const int64_t now = clock_.NowMs();
  v1::JobRecord job;
  job.set_tenant(spec.tenant());
  if (spec.hold()) job.set_user_hold(user.empty() ? "?" : user);  // as snnctl hold would
  spec.clear_hold();
  *job.mutable_spec() = std::move(spec);
  auto first_run = FirstRunOf(job.spec(), now);
  if (!first_run.ok()) return first_run.status();
  job.set_next_run_ms(*first_run);
  SNN_RETURN_IF_ERROR(dependencies_.Check(job));  // before any ID is given out
  job.set_id(jobs_.NextJobId());
  job.set_tenant_job_id(jobs_.NextTenantJobId(job.tenant()));
  if (job.spec().has_array()) {
    jobs_.SkipTenantJobIds(job.tenant(), CountOf(job.spec().array().ranges()));
  }
  job.set_submit_ms(now);
  job.set_session_id(session_id);
  if (job.spec().kind() == v1::SESSION) job.set_renewed_ms(now);
  job.set_reason("submitted");
  if (job.spec().has_array()) *job.mutable_array_left() = job.spec().array().ranges();
  auto* t = job.add_history();
  t->set_time_ms(now);
  t->set_to(v1::PENDING);
  t->set_reason("submitted by " + user + (job.user_hold().empty() ? "" : ", held"));
  const v1::JobRecord& inserted = jobs_.Insert(std::move(job));
  dependencies_.Index(inserted);
  if (metrics_ != nullptr) metrics_->JobSubmitted();
  writer_.Persist(inserted);
  sessions_.Add(inserted);
  if (inserted.next_run_ms() != 0) recurring_.insert(inserted.id());
  if (session_id != 0) {
    StartSteps(*jobs_.Find(session_id));  // its turn may be now
    return &inserted;
  }
  request_schedule_();
  return &inserted;
}

Status JobLifecycle::Cancel(v1::JobRecord& job, const std::string& reason) {
  if (IsTerminal(job.state())) {
    return FailedPrecondition("job " + std::to_string(job.tenant_job_id()) + " (tenant " +
                              job.tenant() + ") has already ended (" +
                              v1::JobState_Name(job.state()) + ")");
  }
  job.set_requeue_when_stopped(false);
  if (job.spec().has_array()) return CancelElements(job, job.spec().array().ranges(), reason);
  if (!RunsOnAgents(job.spec())) {
    EndSession(job, v1::CANCELLED, reason);
    return Status::Ok();
  }
  const bool waiting_step = job.spec().kind() == v1::STEP && job.state() == v1::PENDING;
  jobs_.SetState(job, v1::CANCELLED, clock_.NowMs(), reason);
  if (waiting_step) sessions_.StepGone(job);
  dispatch_.KillActiveTasks(job, reason);
  writer_.Persist(job);
  return Status::Ok();
}

Status JobLifecycle::Hold(v1::JobRecord& job, const std::string& by) {
  if (job.spec().kind() == v1::STEP) {
    return FailedPrecondition("job " + std::to_string(job.tenant_job_id()) +
                              " is a step: it waits only for its session's previous step");
  }
  if (job.state() != v1::PENDING) {
    return FailedPrecondition("job " + std::to_string(job.tenant_job_id()) + " is " +
                              v1::JobState_Name(job.state()) + ": only a pending job is held");
  }
  job.set_user_hold(by.empty() ? "?" : by);
  if (!ArrayExhausted(job)) jobs_.views().Put(job);
  writer_.Persist(job);
  request_schedule_();
  return Status::Ok();
}

Status JobLifecycle::Release(v1::JobRecord& job) {
  if (job.state() != v1::PENDING || job.user_hold().empty()) {
    return FailedPrecondition("job " + std::to_string(job.tenant_job_id()) + " is not held");
  }
  job.clear_user_hold();
  if (!ArrayExhausted(job)) jobs_.views().Put(job);
  writer_.Persist(job);
  request_schedule_();
  return Status::Ok();
}

Status JobLifecycle::Requeue(v1::JobRecord& job, const std::string& by) {
  const std::string name = "job " + std::to_string(job.tenant_job_id());
  if (job.state() != v1::RUNNING) {
    return FailedPrecondition(name + " is " + v1::JobState_Name(job.state()) +
                              ": only a running job can be requeued");
  }
  if (job.requeue_when_stopped()) return FailedPrecondition(name + " is being requeued already");
  if (job.spec().kind() != v1::BATCH) {
    return FailedPrecondition(name + " is a " + KindName(job.spec().kind()) +
                              ": it is not requeued (cancel it, and start another)");
  }
  const std::string reason = "asked by " + by + " (snnctl requeue)";
  LOG(INFO) << "job " << job.id() << " requeued: " << reason;
  job.set_requeue_when_stopped(true);
  job.set_reason("to be requeued: " + reason);
  dispatch_.KillActiveTasks(job, "requeued: " + reason);
  writer_.Persist(job);
  return Status::Ok();
}

void JobLifecycle::ApplyTaskStatus(const std::string& node, const v1::TaskStatus& status) {
  const bool reported_active = IsTaskActive(status.state());
  v1::JobRecord* job = jobs_.Find(status.job_id());
  const bool known = job != nullptr && status.attempt() == job->attempt() &&
                     status.index() < uint32_t(job->tasks_size()) &&
                     job->tasks(status.index()).node() == node;
  if (!known || !IsTaskActive(job->tasks(status.index()).state())) {
    // Fencing: a task the master does not expect to be running must not run.
    if (reported_active) {
      LOG(WARNING) << "node " << node << " runs job " << status.job_id() << " task "
                   << status.index() << " attempt " << status.attempt()
                   << " which the master does not expect; killing it";
      dispatch_.KillWhenDurable(node, {status.job_id(), status.index(), status.attempt()},
                                "the master does not expect this task to run");
    }
    return;
  }
  v1::TaskRecord& task = *job->mutable_tasks(status.index());
  if (status.has_usage()) AddTaskUsage(*job, task, status.usage());
  if (status.has_checkpoint()) KeepCheckpoint(*job, status.index(), status.checkpoint());
  if (reported_active) {
    jobs_.SetTaskState(task, v1::TASK_RUNNING);
    MoveReservation(*job, task, status.mapping());
    // A report without a rectangle keeps the one held: it is what EndTask gives back.
    if (RectOf(status.mapping().rect()).area() > 0) *task.mutable_mapping() = status.mapping();
    task.set_pid(status.pid());
    task.set_stdout_path(status.stdout_path());
    task.set_stderr_path(status.stderr_path());
    task.set_start_ms(status.start_ms() != 0 ? status.start_ms() : clock_.NowMs());
    if (!status.detail().empty()) task.set_detail(status.detail());
    jobs_.TasksChanged(*job, clock_.NowMs());
    if (IsTerminal(job->state())) dispatch_.KillActiveTasks(*job, job->reason());
    writer_.Persist(*job);
    return;
  }
  EndTask(*job, task, status);
}

void JobLifecycle::ApplyUsage(const std::string& node, const v1::TaskUsage& usage) {
  v1::JobRecord* job = jobs_.Find(usage.job_id());
  if (job == nullptr || usage.attempt() != job->attempt() ||
      usage.index() >= uint32_t(job->tasks_size())) {
    return;  // a stale attempt's counters: its final ones came with its end
  }
  v1::TaskRecord& task = *job->mutable_tasks(usage.index());
  if (task.node() != node || !IsTaskActive(task.state())) return;
  bool changed = AddTaskUsage(*job, task, usage.usage());
  if (usage.has_checkpoint()) {
    KeepCheckpoint(*job, usage.index(), usage.checkpoint());
    changed = true;
  }
  if (usage.has_detail() && usage.detail() != task.detail()) {
    task.set_detail(usage.detail());
    changed = true;
  }
  if (changed) writer_.Persist(*job);
}

void JobLifecycle::KeepCheckpoint(v1::JobRecord& job, uint32_t index,
                                  const v1::Checkpoint& checkpoint) {
  auto& all = *job.mutable_checkpoints();
  auto it = std::find_if(all.begin(), all.end(),
                         [&](const v1::Checkpoint& c) { return c.task() == index; });
  if (checkpoint.file().empty()) {  // the directory is gone (its task succeeded)
    if (it != all.end()) all.erase(it);
    return;
  }
  v1::Checkpoint& kept = it != all.end() ? *it : *all.Add();
  kept = checkpoint;
  kept.set_task(index);
}

void JobLifecycle::MoveReservation(const v1::JobRecord& job, const v1::TaskRecord& task,
                                   const v1::TaskMapping& actual) {
  if (!HoldsItsCores(job.spec())) return;  // its session holds the cores
  const Rect held = RectOf(task.mapping().rect()), now = RectOf(actual.rect());
  if (now.area() == 0 || held == now) return;
  // The agent chose another rectangle (the hint was taken): hold what it really uses.
  const v1::Resources& r = job.spec().task().resources();
  nodes_.Release(task.node(), task.board(), r, held);
  nodes_.Reserve(task.node(), task.board(), r, now);
}

namespace {

// Tasks are lost at launch on `node` (why: `detail`): it is drained with that reason, once.
void DrainFailingNode(NodeRegistry& nodes, Journal& journal, const std::string& node,
                      const std::string& detail) {
  const NodeEntry* entry = nodes.Find(node);
  if (entry == nullptr || !entry->record.drain_reason().empty()) return;  // drained already
  const std::string reason = "launches fail on this node: " + detail.substr(0, 160) +
                             " (snnctl node resume " + node + " once it is fixed)";
  if (!nodes.SetDrain(node, -1, reason).ok()) return;
  LOG(ERROR) << "node " << node << " drained: " << reason;
  journal.PutNode(nodes.Find(node)->record);
}

}  // namespace

void JobLifecycle::EndTask(v1::JobRecord& job, v1::TaskRecord& task, const v1::TaskStatus& status) {
  // Lost before it ever ran, in the agent's own word (its answer to the launch: it tried at
  // start_ms and could not start it, its cgroups gone, its disk full): the node's fault. The node
  // is drained with the reason, so that it takes no more work until an operator resumes it, and
  // the attempt, which used nothing, is not billed. (A launch the master settles itself, as
  // unanswered across an agent's restart, carries no start and says nothing of the node.)
  const bool lost_at_launch = task.state() == v1::TASK_LAUNCHING &&
                              status.state() == v1::TASK_LOST && status.start_ms() != 0;
  if (lost_at_launch) DrainFailingNode(nodes_, journal_, task.node(), status.detail());
  jobs_.SetTaskState(task, status.state());
  task.set_exit_code(status.exit_code());
  task.set_term_signal(status.term_signal());
  task.set_detail(status.detail());
  if (HoldsItsCores(job.spec())) {  // a step's cores stay its session's
    nodes_.Release(task.node(), task.board(), job.spec().task().resources(),
                   RectOf(task.mapping().rect()));
  }
  if (status.mapping().cores_size() > 0) *task.mutable_mapping() = status.mapping();
  if (status.start_ms() != 0) task.set_start_ms(status.start_ms());
  task.set_end_ms(status.end_ms() != 0 ? status.end_ms() : clock_.NowMs());
  if (task.usage().rate_ksps() != 0) {  // an ended task injects nothing
    job.mutable_usage()->set_rate_ksps(job.usage().rate_ksps() - task.usage().rate_ksps());
    task.mutable_usage()->set_rate_ksps(0);
  }
  jobs_.TasksChanged(job, clock_.NowMs());
  if (!lost_at_launch) usage_.Record(job, task);
  SettleJob(job, task, lost_at_launch);
  AfterTaskEnded(job);
  writer_.Persist(job);
  request_schedule_();
}

void JobLifecycle::SettleJob(v1::JobRecord& job, const v1::TaskRecord& ended, bool never_ran) {
  const int64_t now = clock_.NowMs();
  const std::string which = "task " + std::to_string(ended.index()) + " on " + Where(ended);
  if (job.state() == v1::RUNNING && !job.requeue_when_stopped() && !ended.given_back()) {
    std::string failure;
    v1::JobState to = v1::FAILED;
    switch (ended.state()) {
      case v1::TASK_EXITED:
        if (ended.term_signal() != 0) {
          failure = which + " was killed by signal " + std::to_string(ended.term_signal()) +
                    (ended.detail().empty() ? "" : " (" + ended.detail() + ")");
          job.set_exit_code(128 + ended.term_signal());
        } else if (ended.exit_code() != 0) {
          failure = which + " exited with code " + std::to_string(ended.exit_code()) +
                    (ended.detail().empty() ? "" : " (" + ended.detail() + ")");
          job.set_exit_code(ended.exit_code());
        }
        break;
      case v1::TASK_TIMED_OUT:
        to = v1::TIMEOUT;
        failure = which + " reached the time limit of " +
                  FormatDurationSeconds(job.spec().time_limit_s());
        break;
      case v1::TASK_LAUNCH_FAILED:
        failure = which + " could not start: " + ended.detail();
        break;
      case v1::TASK_KILLED:
        failure = which + " was killed: " + ended.detail();
        break;
      case v1::TASK_LOST:
        if (job.spec().no_requeue()) {
          failure = which + " was lost (" + ended.detail() + ") and the job may not be requeued";
          break;
        }
        // A task the node could not even start is not the job's doing: it does not count
        // towards max_lost_requeues (the node is drained instead).
        if (!never_ran && job.lost_count() >= MaxLostRequeues(scheduling_.scheduling())) {
          failure = which + " was lost (" + ended.detail() + "); its tasks were lost " +
                    std::to_string(job.lost_count() + 1) + " times, past max_lost_requeues (" +
                    std::to_string(MaxLostRequeues(scheduling_.scheduling())) +
                    "): does the job take its nodes down?";
          break;
        }
        if (!never_ran) job.set_lost_count(job.lost_count() + 1);
        job.set_requeue_when_stopped(true);
        job.set_reason("to be requeued: " + which + " was lost (" + ended.detail() + ")");
        dispatch_.KillActiveTasks(job, "another task of the job was lost");
        break;
      default:
        break;
    }
    if (!failure.empty()) {
      jobs_.SetState(job, to, now, failure);
      dispatch_.KillActiveTasks(job, "another task of the job ended: " + failure);
    }
  }
  for (const auto& t : job.tasks()) {
    if (IsTaskActive(t.state())) return;  // settle once every task has stopped
  }
  if (job.state() != v1::RUNNING) return;
  if (job.requeue_when_stopped()) {
    job.set_requeue_when_stopped(false);
    job.set_requeue_count(job.requeue_count() + 1);
    const std::string why = job.reason().substr(job.reason().find(':') + 2);
    jobs_.SetState(job, v1::PENDING, now, "requeued: " + why);
    return;
  }
  job.set_exit_code(0);
  if (!job.spec().sets_attribute().empty()) {  // a calibration job marks where it ran
    for (const auto& t : job.tasks()) {
      if (t.given_back() || t.node().empty()) continue;
      if (const v1::NodeRecord* r = nodes_.Mark(t.node(), t.board(), job.spec().sets_attribute(),
                                                FormatIsoUtcTime(now))) {
        journal_.PutNode(*r);
      }
    }
  }
  int finished = 0;  // extra replicas given back do not count
  for (const auto& t : job.tasks()) finished += t.given_back() ? 0 : 1;
  jobs_.SetState(job, v1::COMPLETED, now,
                 finished == 1 ? "the task exited with code 0"
                               : "all " + std::to_string(finished) + " tasks exited with code 0");
}

void JobLifecycle::ReconcileNode(const std::string& node, const v1::RegisterRequest& request) {
  std::set<TaskId> keep;
  for (const auto& status : request.tasks()) {
    keep.insert({status.job_id(), status.index(), status.attempt()});
    ApplyTaskStatus(node, status);
  }
  // A launch sent on the session this registration came on may reach the agent after it
  // described its tasks: its answer settles it. Lost now, the job could start again beside it.
  keep.merge(dispatch_.UnansweredOnCurrentSession(node));
  for (uint64_t id : jobs_.JobsActiveOn(node)) {  // a session's tasks are held here, not there
    const v1::JobRecord& job = *jobs_.Find(id);
    if (RunsOnAgents(job.spec())) continue;
    for (const auto& t : job.tasks()) keep.insert({id, t.index(), t.attempt()});
  }
  LoseTasksOnNode(node, keep, "the agent on " + node + " registered without it");
  request_schedule_();
}

void JobLifecycle::OnNodeDown(const std::string& node, const std::string& reason) {
  LoseTasksOnNode(node, {}, "node " + node + " is DOWN: " + reason);
  journal_.Commit();
}

void JobLifecycle::LoseTasksOnNode(const std::string& node, const std::set<TaskId>& except,
                                   const std::string& detail) {
  // A copy: ending tasks changes the index.
  const std::vector<uint64_t> affected(jobs_.JobsActiveOn(node).begin(),
                                       jobs_.JobsActiveOn(node).end());
  for (uint64_t id : affected) {
    v1::JobRecord& job = *jobs_.Find(id);
    for (int i = 0; i < job.tasks_size(); ++i) {
      v1::TaskRecord& task = *job.mutable_tasks(i);
      if (task.node() != node || !IsTaskActive(task.state()) ||
          except.count({id, task.index(), task.attempt()})) {
        continue;
      }
      v1::TaskStatus lost;
      lost.set_job_id(id);
      lost.set_index(task.index());
      lost.set_attempt(task.attempt());
      lost.set_state(v1::TASK_LOST);
      lost.set_detail(detail);
      EndTask(job, task, lost);
    }
  }
}

void JobLifecycle::RecoverReservations() {
  const int64_t now = clock_.NowMs();
  for (auto& [id, job] : jobs_.jobs()) {
    sessions_.Add(job);
    if (job.next_run_ms() != 0 && job.state() == v1::PENDING) recurring_.insert(id);
    if (job.spec().kind() == v1::SESSION && !IsTerminal(job.state())) {
      jobs_.Find(id)->set_renewed_ms(std::max(job.renewed_ms(), now));
    }
    if (!HoldsItsCores(job.spec())) continue;  // its cores are its session's
    for (const auto& task : job.tasks()) {
      if (IsTaskActive(task.state())) {
        nodes_.Reserve(task.node(), task.board(), job.spec().task().resources(),
                       RectOf(task.mapping().rect()));
      }
    }
  }
}

}  // namespace snn
