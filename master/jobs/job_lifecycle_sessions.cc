// JobLifecycle, sessions and steps: a session (snnctl alloc) is placed and started by the
// scheduler like any job, but its tasks are held here, not run by an agent; its steps
// (snnctl run --alloc) are placed by it, not by the scheduler: each on its session task's board
// and cores exactly, one at a time per session task, in the order they came. A session ends
// when its client stops renewing it (keepalive), when no step has run in it for the policy's
// session_idle_limit, at its time limit, or when cancelled; its steps end with it.
#include <glog/logging.h>

#include <algorithm>
#include <vector>

#include "common/base/duration.h"
#include "common/base/job_validation.h"
#include "master/jobs/job_lifecycle.h"

namespace snn {
namespace {

std::string Session(const v1::JobRecord& job) {
  return "session " + std::to_string(job.tenant_job_id());
}

}  // namespace

Result<uint64_t> JobLifecycle::PrepareStep(v1::JobSpec& spec, const std::string& user) {
  const std::string which = "session " + std::to_string(spec.alloc());
  v1::JobRecord* session = jobs_.FindByTenant(spec.tenant(), spec.alloc());
  if (session == nullptr || session->spec().kind() != v1::SESSION) {
    return NotFound("tenant '" + spec.tenant() + "' has no " + which +
                    " that runs now (snnctl alloc grants one)");
  }
  if (session->spec().user() != user) {
    return PermissionDenied(which + " is " + session->spec().user() +
                            "'s: only its owner starts steps in it");
  }
  if (session->state() != v1::RUNNING) {
    return FailedPrecondition(which + " is " + v1::JobState_Name(session->state()) + " (" +
                              session->reason() + "): steps start once it runs");
  }
  if (spec.alloc_task() >= uint32_t(session->tasks_size())) {
    return InvalidArgument(which + " has " + std::to_string(session->tasks_size()) +
                           " task(s): there is no task " + std::to_string(spec.alloc_task()));
  }
  if (spec.after_ok_size() > 0 || spec.after_any_size() > 0 || spec.after_not_ok_size() > 0 ||
      spec.after_corr_size() > 0 || spec.min_replicas() > 1 || spec.max_replicas() > 1) {
    return InvalidArgument(
        "a step runs on one task of its session, in its turn: no replicas, no dependencies");
  }
  // Everything it holds is the session's.
  spec.set_pool(session->spec().pool());
  spec.set_queue(session->spec().queue());
  spec.set_min_replicas(1);
  spec.set_max_replicas(1);
  spec.set_preemptible(false);
  spec.set_no_requeue(true);
  *spec.mutable_task()->mutable_resources() = session->spec().task().resources();
  return session->id();
}

void JobLifecycle::StartSteps(v1::JobRecord& session) {
  if (session.state() != v1::RUNNING) return;
  for (const auto& held : session.tasks()) {
    if (!IsTaskActive(held.state())) continue;
    const uint64_t next = sessions_.NextStep(session.id(), held.index());
    v1::JobRecord* step = next == 0 ? nullptr : jobs_.Find(next);
    if (step == nullptr) continue;
    const int64_t now = clock_.NowMs();
    step->set_attempt(step->attempt() + 1);
    step->clear_tasks();
    v1::TaskRecord* task = &jobs_.AddTask(*step);
    task->set_node(held.node());
    task->set_board(held.board());
    *task->mutable_mapping()->mutable_rect() = held.mapping().rect();
    jobs_.SetState(*step, v1::RUNNING, now,
                   "started in " + Session(session) + " on " + held.node() + "/board" +
                       std::to_string(held.board()));
    sessions_.StepStarted(*step);
    if (session.idle_since_ms() > 0) {
      session.set_idle_ms(session.idle_ms() + std::max<int64_t>(0, now - session.idle_since_ms()));
      session.set_idle_since_ms(0);
    }
    session.set_steps(session.steps() + 1);
    writer_.Persist(*step);
    dispatch_.LaunchWhenDurable(*step, 0);
  }
  writer_.Persist(session);
}

void JobLifecycle::AfterTaskEnded(v1::JobRecord& job) {
  if (!RunsOnAgents(job.spec()) && IsTerminal(job.state())) {
    SessionStopped(job, job.reason());
    return;
  }
  if (job.spec().kind() != v1::STEP || !IsArchivable(job)) return;
  sessions_.StepGone(job);
  v1::JobRecord* session = jobs_.Find(job.session_id());
  if (session == nullptr || session->state() != v1::RUNNING) return;
  if (!sessions_.AnyStepRunning(session->id()) && session->idle_since_ms() == 0) {
    session->set_idle_since_ms(clock_.NowMs());
  }
  StartSteps(*session);
}

void JobLifecycle::EndSession(v1::JobRecord& session, v1::JobState to, const std::string& reason) {
  if (!IsTerminal(session.state())) jobs_.SetState(session, to, clock_.NowMs(), reason);
  SessionStopped(session, reason);
  writer_.Persist(session);
}

void JobLifecycle::SessionStopped(v1::JobRecord& session, const std::string& reason) {
  const int64_t now = clock_.NowMs();
  sessions_.RemoveSession(session.id());
  if (session.idle_since_ms() > 0) {
    session.set_idle_ms(session.idle_ms() + std::max<int64_t>(0, now - session.idle_since_ms()));
    session.set_idle_since_ms(0);
  }
  for (auto& task : *session.mutable_tasks()) {
    if (!IsTaskActive(task.state())) continue;
    jobs_.SetTaskState(task, v1::TASK_KILLED);
    task.set_detail("the session ended: " + reason);
    task.set_end_ms(now);
    nodes_.Release(task.node(), task.board(), session.spec().task().resources(),
                   RectOf(task.mapping().rect()));
    usage_.Record(session, task);
  }
  jobs_.TasksChanged(session, now);
  if (session.spec().kind() == v1::SERVICE && on_service_ended_) on_service_ended_(session, reason);
  for (uint64_t id : sessions_.StepsOf(session.id())) {
    v1::JobRecord* step = jobs_.Find(id);
    if (step == nullptr || IsTerminal(step->state())) continue;
    const std::string why = "its " + Session(session) + " ended: " + reason;
    if (step->state() == v1::PENDING) {
      jobs_.SetState(*step, v1::CANCELLED, now, why);
      sessions_.StepGone(*step);
      writer_.Persist(*step);
    } else {
      (void)Cancel(*step, why);
    }
  }
  request_schedule_();
}

Result<int64_t> JobLifecycle::Renew(v1::JobRecord& job, uint32_t keepalive_s) {
  if (job.spec().kind() != v1::SESSION) {
    return FailedPrecondition("job " + std::to_string(job.tenant_job_id()) +
                              " is not a session: only a session is renewed");
  }
  if (IsTerminal(job.state())) {
    return FailedPrecondition(Session(job) + " has ended (" + v1::JobState_Name(job.state()) +
                              ": " + job.reason() + ")");
  }
  if (keepalive_s > JobLimits::kMaxKeepaliveS) {
    return InvalidArgument("keepalive is above the maximum of " +
                           std::to_string(JobLimits::kMaxKeepaliveS) + " s");
  }
  if (keepalive_s > 0) job.mutable_spec()->set_keepalive_s(keepalive_s);
  job.set_renewed_ms(clock_.NowMs());
  writer_.Persist(job);
  return job.renewed_ms() + int64_t(job.spec().keepalive_s()) * 1000;
}

std::string JobLifecycle::SessionExpiry(const v1::JobRecord& job, int64_t now) const {
  const bool session = job.spec().kind() == v1::SESSION;  // a service is not renewed
  const int64_t keepalive_ms = int64_t(job.spec().keepalive_s()) * 1000;
  if (session && now - job.renewed_ms() >= keepalive_ms) {
    return "not renewed for " + FormatDurationUnit(job.spec().keepalive_s()) +
           " (its keepalive): its client is gone";
  }
  if (job.state() != v1::RUNNING) return "";
  const uint64_t idle_limit_s = scheduling_.scheduling().session_idle_limit_s();
  if (session && idle_limit_s > 0 && job.idle_since_ms() > 0 &&
      now - job.idle_since_ms() >= int64_t(idle_limit_s) * 1000) {
    return "idle: no step ran in it for " + FormatDurationUnit(idle_limit_s) +
           " (the policy's session_idle_limit)";
  }
  const uint64_t limit_s = job.spec().time_limit_s();
  if (limit_s > 0 && now - job.start_ms() >= int64_t(limit_s) * 1000) {
    return "reached its time limit of " + FormatDurationSeconds(limit_s);
  }
  return "";
}

void JobLifecycle::ReapSessions() {
  const int64_t now = clock_.NowMs();
  std::vector<std::pair<uint64_t, std::string>> ending;
  for (uint64_t id : sessions_.sessions()) {
    const v1::JobRecord* job = jobs_.Find(id);
    if (job == nullptr) continue;
    if (std::string why = SessionExpiry(*job, now); !why.empty()) ending.emplace_back(id, why);
  }
  for (const auto& [id, why] : ending) {
    LOG(INFO) << "session job " << id << " ends: " << why;
    EndSession(*jobs_.Find(id), v1::TIMEOUT, why);
  }
  if (!ending.empty()) journal_.Commit();
}

}  // namespace snn
