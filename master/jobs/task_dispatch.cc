#include "master/jobs/task_dispatch.h"

#include <glog/logging.h>

namespace snn {

void TaskDispatch::LaunchWhenDurable(const v1::JobRecord& job, uint32_t index) {
  journal_.Defer([this, task = TaskId{job.id(), index, job.attempt()}] { SendLaunch(task); });
}

void TaskDispatch::KillWhenDurable(const std::string& node, const TaskId& task,
                                   const std::string& reason) {
  journal_.Defer([this, node, task, reason] {
    v1::KillRequest req;
    req.set_job_id(std::get<0>(task));
    req.set_index(std::get<1>(task));
    req.set_attempt(std::get<2>(task));
    req.set_reason(reason);
    agents_.Kill(node, req);
  });
}

void TaskDispatch::KillActiveTasks(const v1::JobRecord& job, const std::string& reason) {
  if (!RunsOnAgents(job.spec())) return;  // its tasks are held here, not run by an agent
  for (const auto& task : job.tasks()) {
    if (!IsTaskActive(task.state())) continue;
    KillWhenDurable(task.node(), {job.id(), task.index(), task.attempt()}, reason);
  }
}

std::set<TaskId> TaskDispatch::UnansweredOnCurrentSession(const std::string& node) const {
  std::set<TaskId> unanswered;
  const uint64_t epoch = agents_.SessionEpoch(node);
  for (const auto& [task, sent_on] : launches_in_flight_) {
    const auto [job_id, index, attempt] = task;
    const v1::JobRecord* job = jobs_.Find(job_id);
    if (sent_on == epoch && job != nullptr && index < uint32_t(job->tasks_size()) &&
        job->tasks(index).node() == node && job->tasks(index).state() == v1::TASK_LAUNCHING) {
      unanswered.insert(task);
    }
  }
  return unanswered;
}

void TaskDispatch::SendLaunch(const TaskId& id) {
  const auto [job_id, index, attempt] = id;
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
  req.set_hint_only(!HoldsItsCores(job->spec()));  // the session holds exactly these cores
  const std::string node = task.node();
  launches_in_flight_[id] = agents_.SessionEpoch(node);
  agents_.Launch(node, req, [this, node, id](Result<v1::LaunchResponse> answer) {
    OnLaunchAnswer(node, id, answer);
  });
}

void TaskDispatch::OnLaunchAnswer(const std::string& node, const TaskId& id,
                                  const Result<v1::LaunchResponse>& answer) {
  launches_in_flight_.erase(id);
  const auto [job_id, index, attempt] = id;
  if (!answer.ok() && answer.status().code() == Code::kUnavailable) {
    // The session dropped: whether it started is settled when the agent registers again.
    LOG(INFO) << "launch of job " << job_id << " task " << index << " on " << node
              << " unanswered: " << answer.status().ToString();
    return;
  }
  v1::TaskStatus status;
  if (answer.ok()) {
    status = answer->status();
  } else {
    status.set_job_id(job_id);
    status.set_index(index);
    status.set_attempt(attempt);
    // An agent whose board cannot take the task (its view differs) loses it: requeue. Anything
    // else it refused is the job's own fault (bad command, bad workdir): fail.
    status.set_state(answer.status().code() == Code::kResourceExhausted ? v1::TASK_LOST
                                                                        : v1::TASK_LAUNCH_FAILED);
    status.set_detail(answer.status().message());
  }
  if (on_answer_) on_answer_(node, status);
  journal_.Commit();
}

}  // namespace snn
