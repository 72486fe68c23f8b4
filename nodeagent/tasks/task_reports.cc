// What the task manager tells the master of its tasks: each task's status (state, exit, usage,
// mapping, checkpoint), the running ones and the ended ones not yet acknowledged.
#include "nodeagent/tasks/task_manager.h"

namespace snn {

v1::TaskStatus TaskManager::StatusOf(const Task& task) const {
  v1::TaskStatus s;
  s.set_job_id(task.launch.key.job_id);
  s.set_index(task.launch.key.index);
  s.set_attempt(task.launch.key.attempt);
  s.set_board(task.launch.board);
  s.set_pid(static_cast<uint32_t>(task.process.pid));
  *s.mutable_mapping() = task.mapping;
  s.set_start_ms(task.launch.start_ms);
  s.set_stdout_path(task.launch.stdout_path);
  s.set_stderr_path(task.launch.stderr_path);
  *s.mutable_usage() = planes_.Counted(task);
  if (!task.ended()) {
    s.set_state(v1::TASK_RUNNING);
    s.set_detail(task.note);
    return s;
  }
  s.set_state(task.final_state);
  s.set_exit_code(task.process.exit_code);
  s.set_term_signal(task.process.term_signal);
  s.set_end_ms(task.end_ms);
  s.set_detail(task.stop ? task.stop->reason : task.note);
  // Its last word on the directory: the newest file, or none left (removed after exit 0).
  if (checkpoints_.enabled()) *s.mutable_checkpoint() = task.checkpoint;
  return s;
}

std::vector<v1::TaskStatus> TaskManager::Snapshot() const {
  std::vector<v1::TaskStatus> out;
  for (const auto& [key, task] : tasks_) out.push_back(StatusOf(task));
  return out;
}

std::vector<v1::TaskStatus> TaskManager::EndedUnacknowledged() const {
  std::vector<v1::TaskStatus> out;
  for (const auto& [key, task] : tasks_) {
    if (task.ended()) out.push_back(StatusOf(task));
  }
  return out;
}

void TaskManager::Acknowledge(const std::vector<TaskKey>& keys) {
  for (const TaskKey& key : keys) {
    auto it = tasks_.find(key);
    if (it == tasks_.end() || !it->second.ended()) continue;
    records_->Remove(it->second.launch.record_file);  // the master has it now
    tasks_.erase(it);
  }
}

}  // namespace snn
