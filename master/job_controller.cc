#include "master/job_controller.h"

#include <glog/logging.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "common/duration.h"
#include "common/job_validation.h"
#include "master/admission.h"
#include "master/sched/gang_topology.h"
#include "master/sched/policy_config.h"
#include "master/usage_accounting.h"
#include "master/usage_report.h"

namespace snn {
namespace {

std::string Where(const v1::TaskRecord& task) {
  return task.node() + "/board" + std::to_string(task.board());
}

}  // namespace

JobController::JobController(JobTable& jobs, JobArchive& archive, NodeRegistry& nodes,
                             AgentChannel& agents, Journal& journal, const Clock& clock,
                             ControllerOptions options, std::function<void()> request_schedule)
    : jobs_(jobs),
      archive_(archive),
      nodes_(nodes),
      agents_(agents),
      journal_(journal),
      clock_(clock),
      options_(std::move(options)),
      request_schedule_(std::move(request_schedule)) {
  SetScheduling(options_.scheduling);
}

void JobController::RecoverReservations() {
  for (const auto& [id, job] : jobs_.jobs()) {
    for (const auto& task : job.tasks()) {
      if (IsTaskActive(task.state())) {
        nodes_.Reserve(task.node(), task.board(), job.spec().task().resources(),
                       RectOf(task.mapping().rect()));
      }
    }
  }
}

size_t JobController::ArchiveFinishedJobs() {
  std::vector<const v1::JobRecord*> finished;
  for (const auto& [id, job] : jobs_.jobs()) {
    if (IsArchivable(job) && !jobs_.IsArchived(id)) finished.push_back(&job);
  }
  for (const v1::JobRecord* job : finished) Persist(*job);
  return finished.size();
}

void JobController::Persist(const v1::JobRecord& job) {
  if (IsTerminal(job.state()) && !dependents_.empty() && !settling_) SettleDependents(job);
  if (!IsArchivable(job)) {
    journal_.PutJob(job);
    return;
  }
  // Nothing changes a job that has ended with no task running, so one move is enough.
  if (jobs_.IsArchived(job.id())) return;
  archive_.Add(job, journal_);
  jobs_.MarkArchived(job);
  journal_.Defer([this, id = job.id()] { jobs_.Drop(id); });
}

double JobController::UnitKsps() const {
  if (!options_.admission.unit_board_type.empty()) {
    if (const uint32_t median = nodes_.MedianKsps(options_.admission.unit_board_type)) {
      return median;
    }
  }
  return options_.admission.unit_ksps;
}

Result<const v1::JobRecord*> JobController::Submit(v1::JobSpec submitted, const std::string& user) {
  AdmissionLimits limits = options_.admission;
  limits.unit_ksps = UnitKsps();
  auto admitted = AdmitJob(std::move(submitted), user, limits, scheduling_, AdmissionBoards());
  if (!admitted.ok()) return admitted.status();
  v1::JobSpec spec = std::move(*admitted);
  const int64_t now = clock_.NowMs();
  v1::JobRecord job;
  job.set_tenant(spec.tenant());
  *job.mutable_spec() = std::move(spec);
  SNN_RETURN_IF_ERROR(AddDependencies(job));  // before any ID is given out
  job.set_id(jobs_.NextJobId());
  job.set_tenant_job_id(jobs_.NextTenantJobId(job.tenant()));
  job.set_submit_ms(now);
  job.set_state(v1::PENDING);
  job.set_reason("submitted");
  auto* t = job.add_history();
  t->set_time_ms(now);
  t->set_to(v1::PENDING);
  t->set_reason("submitted by " + user);
  const v1::JobRecord& inserted = jobs_.Insert(std::move(job));
  IndexDependencies(inserted);
  if (metrics_ != nullptr) metrics_->JobSubmitted();
  Persist(inserted);
  request_schedule_();
  return &inserted;
}

Status JobController::Cancel(v1::JobRecord& job, const std::string& reason) {
  if (IsTerminal(job.state())) {
    return FailedPrecondition("job " + std::to_string(job.tenant_job_id()) + " (tenant " +
                              job.tenant() + ") has already ended (" +
                              v1::JobState_Name(job.state()) + ")");
  }
  job.set_requeue_when_stopped(false);
  jobs_.SetState(job, v1::CANCELLED, clock_.NowMs(), reason);
  KillActiveTasks(job, reason);
  Persist(job);
  return Status::Ok();
}

void JobController::StartJob(v1::JobRecord& job, const StartDecision& decision) {
  if (metrics_ != nullptr) {
    // Since it last became pending: its submit, or its last requeue.
    const int64_t since =
        job.history_size() > 0 ? job.history(job.history_size() - 1).time_ms() : job.submit_ms();
    metrics_->JobStarted(static_cast<double>(clock_.NowMs() - since) / 1000.0, decision.backfilled);
  }
  job.set_attempt(job.attempt() + 1);
  job.clear_tasks();
  std::string where;
  for (size_t i = 0; i < decision.tasks.size(); ++i) {
    AddTask(job, decision.tasks[i]);
    if (i < 4) where += (where.empty() ? "" : ", ") + Where(job.tasks(static_cast<int>(i)));
  }
  if (decision.tasks.size() > 4) where += ", ...";
  jobs_.SetState(job, v1::RUNNING, clock_.NowMs(), "started on " + where);
  Persist(job);
}

std::vector<std::string> JobController::GangLinks(const v1::JobRecord& job) const {
  std::vector<std::string> links;
  // A gang's replica pairs (the first 8 replicas: 28 pairs), as the topology has them now.
  const int n = std::min(job.tasks_size(), 8);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const v1::TaskRecord &ta = job.tasks(a), &tb = job.tasks(b);
      const NodeEntry* na = nodes_.Find(ta.node());
      const NodeEntry* nb = nodes_.Find(tb.node());
      if (na == nullptr || nb == nullptr) continue;
      links.push_back("task " + std::to_string(a) + " (" + ta.node() + "/" +
                      std::to_string(ta.board()) + ") - task " + std::to_string(b) + " (" +
                      tb.node() + "/" + std::to_string(tb.board()) +
                      "): " + DescribeCloseness(na->record, ta.board(), nb->record, tb.board()));
    }
  }
  return links;
}

void JobController::AddTask(v1::JobRecord& job, const TaskPlacement& p) {
  const uint32_t index = static_cast<uint32_t>(job.tasks_size());
  const uint32_t attempt = job.attempt();
  v1::TaskRecord* task = job.add_tasks();
  task->set_index(index);
  task->set_attempt(attempt);
  task->set_node(p.node);
  task->set_board(p.board);
  task->set_state(v1::TASK_LAUNCHING);
  v1::CoreRect* rect = task->mutable_mapping()->mutable_rect();
  rect->set_x(p.rect.x);
  rect->set_y(p.rect.y);
  rect->set_width(p.rect.w);
  rect->set_height(p.rect.h);
  nodes_.Reserve(p.node, p.board, job.spec().task().resources(), p.rect);
  journal_.Defer([this, id = job.id(), index, attempt] { SendLaunch(id, index, attempt); });
}

void JobController::SendLaunch(uint64_t job_id, uint32_t index, uint32_t attempt) {
  v1::JobRecord* job = jobs_.Find(job_id);
  if (job == nullptr || job->attempt() != attempt || index >= uint32_t(job->tasks_size())) return;
  const v1::TaskRecord& task = job->tasks(index);
  if (task.state() != v1::TASK_LAUNCHING) return;  // ended or lost meanwhile
  if (!agents_.Reachable(task.node())) return;     // reconciled when it registers
  v1::LaunchRequest req;
  req.set_job_id(job_id);
  req.set_tenant_job_id(job->tenant_job_id());
  req.set_tenant(job->tenant());
  req.set_index(index);
  req.set_attempt(attempt);
  req.set_board(task.board());
  *req.mutable_task() = job->spec().task();
  req.set_time_limit_ms(job->spec().time_limit_s() * 1000);
  req.set_uid(job->spec().uid());
  req.set_gid(job->spec().gid());
  req.set_user(job->spec().user());
  *req.mutable_hint() = task.mapping().rect();
  const std::string node_name = task.node();
  launches_in_flight_[{job_id, index, attempt}] = agents_.SessionEpoch(node_name);
  agents_.Launch(node_name, req,
                 [this, node_name, job_id, index, attempt](Result<v1::LaunchResponse> answer) {
                   OnLaunchAnswer(node_name, job_id, index, attempt, answer);
                 });
}

void JobController::OnLaunchAnswer(const std::string& node, uint64_t job_id, uint32_t index,
                                   uint32_t attempt, const Result<v1::LaunchResponse>& answer) {
  launches_in_flight_.erase({job_id, index, attempt});
  if (answer.ok()) {
    ApplyTaskStatus(node, answer->status());
  } else if (answer.status().code() == Code::kUnavailable) {
    // The session dropped: whether it started is settled when the agent registers again.
    LOG(INFO) << "launch of job " << job_id << " task " << index << " on " << node
              << " unanswered: " << answer.status().ToString();
    return;
  } else {
    v1::TaskStatus status;
    status.set_job_id(job_id);
    status.set_index(index);
    status.set_attempt(attempt);
    // An agent whose board cannot take the task (its view differs) loses it: requeue. Anything
    // else it refused is the job's own fault (bad command, bad workdir): fail.
    status.set_state(answer.status().code() == Code::kResourceExhausted ? v1::TASK_LOST
                                                                        : v1::TASK_LAUNCH_FAILED);
    status.set_detail(answer.status().message());
    ApplyTaskStatus(node, status);
  }
  journal_.Commit();
}

void JobController::SendKill(const std::string& node, uint64_t job_id, uint32_t index,
                             uint32_t attempt, const std::string& reason) {
  v1::KillRequest req;
  req.set_job_id(job_id);
  req.set_index(index);
  req.set_attempt(attempt);
  req.set_reason(reason);
  agents_.Kill(node, req);
}

void JobController::KillActiveTasks(const v1::JobRecord& job, const std::string& reason) {
  for (const auto& task : job.tasks()) {
    if (!IsTaskActive(task.state())) continue;
    journal_.Defer([this, node = task.node(), id = job.id(), index = task.index(),
                    attempt = task.attempt(),
                    reason] { SendKill(node, id, index, attempt, reason); });
  }
}

void JobController::ApplyTaskStatus(const std::string& node, const v1::TaskStatus& status) {
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
      journal_.Defer([this, node, status] {
        SendKill(node, status.job_id(), status.index(), status.attempt(),
                 "the master does not expect this task to run");
      });
    }
    return;
  }
  v1::TaskRecord& task = *job->mutable_tasks(status.index());
  if (status.has_usage()) AddTaskUsage(*job, task, status.usage());
  if (status.has_checkpoint()) KeepCheckpoint(*job, status.index(), status.checkpoint());
  if (reported_active) {
    task.set_state(v1::TASK_RUNNING);
    MoveReservation(*job, task, status.mapping());
    // A report without a rectangle keeps the one held: it is what EndTask gives back.
    if (RectOf(status.mapping().rect()).area() > 0) *task.mutable_mapping() = status.mapping();
    task.set_pid(status.pid());
    task.set_stdout_path(status.stdout_path());
    task.set_stderr_path(status.stderr_path());
    task.set_start_ms(status.start_ms() != 0 ? status.start_ms() : clock_.NowMs());
    jobs_.TasksChanged(*job, clock_.NowMs());
    if (IsTerminal(job->state())) KillActiveTasks(*job, job->reason());
    Persist(*job);
    return;
  }
  EndTask(*job, task, status);
}

void JobController::ApplyUsage(const std::string& node, const v1::TaskUsage& usage) {
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
  if (changed) Persist(*job);
}

void JobController::KeepCheckpoint(v1::JobRecord& job, uint32_t index,
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

void JobController::MoveReservation(const v1::JobRecord& job, const v1::TaskRecord& task,
                                    const v1::TaskMapping& actual) {
  const Rect held = RectOf(task.mapping().rect()), now = RectOf(actual.rect());
  if (now.area() == 0 || held == now) return;
  // The agent chose another rectangle (the hint was taken): hold what it really uses.
  const v1::Resources& r = job.spec().task().resources();
  nodes_.Release(task.node(), task.board(), r, held);
  nodes_.Reserve(task.node(), task.board(), r, now);
}

void JobController::EndTask(v1::JobRecord& job, v1::TaskRecord& task,
                            const v1::TaskStatus& status) {
  task.set_state(status.state());
  task.set_exit_code(status.exit_code());
  task.set_term_signal(status.term_signal());
  task.set_detail(status.detail());
  nodes_.Release(task.node(), task.board(), job.spec().task().resources(),
                 RectOf(task.mapping().rect()));
  if (status.mapping().cores_size() > 0) *task.mutable_mapping() = status.mapping();
  if (status.start_ms() != 0) task.set_start_ms(status.start_ms());
  task.set_end_ms(status.end_ms() != 0 ? status.end_ms() : clock_.NowMs());
  if (task.usage().rate_ksps() != 0) {  // an ended task injects nothing
    job.mutable_usage()->set_rate_ksps(job.usage().rate_ksps() - task.usage().rate_ksps());
    task.mutable_usage()->set_rate_ksps(0);
  }
  jobs_.TasksChanged(job, clock_.NowMs());
  RecordUsage(job, task);
  SettleJob(job, task);
  Persist(job);
  request_schedule_();
}

void JobController::set_billing(BillingLedger* billing) {
  billing_ = billing;
  if (billing_ != nullptr) billing_->SetConfig(scheduling_.billing());
  BudgetsChanged();
}

void JobController::BudgetsChanged() {
  policy_.held_tenants.clear();
  if (billing_ != nullptr) policy_.held_tenants = billing_->HeldTenants();
  request_schedule_();
}

void JobController::RecordUsage(const v1::JobRecord& job, const v1::TaskRecord& task) {
  if (billing_ == nullptr || task.start_ms() == 0) return;  // never ran: nothing to bill
  v1::UsageRecord r = UsageOf(job, task, BoardTypeOf(task));
  if (billing_->Record(r, journal_)) BudgetsChanged();
}

std::string JobController::BoardTypeOf(const v1::TaskRecord& task) const {
  if (const NodeEntry* node = nodes_.Find(task.node())) {
    for (const auto& b : node->record.boards()) {
      if (b.index() == task.board()) return b.type();
    }
  }
  return "";
}

void JobController::SettleJob(v1::JobRecord& job, const v1::TaskRecord& ended) {
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
          failure = which + " exited with code " + std::to_string(ended.exit_code());
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
        if (job.lost_count() >= MaxLostRequeues(scheduling_)) {
          failure = which + " was lost (" + ended.detail() + "); its tasks were lost " +
                    std::to_string(job.lost_count() + 1) + " times, past max_lost_requeues (" +
                    std::to_string(MaxLostRequeues(scheduling_)) +
                    "): does the job take its nodes down?";
          break;
        }
        job.set_lost_count(job.lost_count() + 1);
        job.set_requeue_when_stopped(true);
        job.set_reason("to be requeued: " + which + " was lost (" + ended.detail() + ")");
        KillActiveTasks(job, "another task of the job was lost");
        break;
      default:
        break;
    }
    if (!failure.empty()) {
      jobs_.SetState(job, to, now, failure);
      KillActiveTasks(job, "another task of the job ended: " + failure);
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
  int finished = 0;  // extra replicas given back do not count
  for (const auto& t : job.tasks()) finished += t.given_back() ? 0 : 1;
  jobs_.SetState(job, v1::COMPLETED, now,
                 finished == 1 ? "the task exited with code 0"
                               : "all " + std::to_string(finished) + " tasks exited with code 0");
}

void JobController::ReconcileNode(const std::string& node, const v1::RegisterRequest& request) {
  std::set<TaskId> keep;
  for (const auto& status : request.tasks()) {
    keep.insert({status.job_id(), status.index(), status.attempt()});
    ApplyTaskStatus(node, status);
  }
  // A launch sent on the session this registration came on may reach the agent after it
  // described its tasks: its answer settles it. Lost now, the job could start again beside it.
  const uint64_t epoch = agents_.SessionEpoch(node);
  for (const auto& [task, sent_on] : launches_in_flight_) {
    const v1::JobRecord* job = jobs_.Find(std::get<0>(task));
    if (sent_on == epoch && job != nullptr && std::get<1>(task) < uint32_t(job->tasks_size()) &&
        job->tasks(std::get<1>(task)).node() == node &&
        job->tasks(std::get<1>(task)).state() == v1::TASK_LAUNCHING) {
      keep.insert(task);
    }
  }
  LoseTasksOnNode(node, keep, "the agent on " + node + " registered without it");
  request_schedule_();
}

void JobController::OnNodeDown(const std::string& node, const std::string& reason) {
  LoseTasksOnNode(node, {}, "node " + node + " is DOWN: " + reason);
  journal_.Commit();
}

void JobController::LoseTasksOnNode(const std::string& node, const std::set<TaskId>& except,
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

}  // namespace snn
