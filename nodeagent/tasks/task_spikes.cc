// The spike side of the task manager: tasks held until their networks are built, and what the
// gateway counted for each (the planes themselves: nodeagent/tasks/task_planes.h).
#include <glog/logging.h>
#include <google/protobuf/util/message_differencer.h>
#include <signal.h>

#include "nodeagent/tasks/launcher.h"
#include "nodeagent/tasks/task_manager.h"

namespace snn {

void TaskManager::AttachBuiltNetworks() {
  for (auto& built : planes_.TakeBuilt()) {
    auto it = tasks_.find(built.key);
    // Its launch failed after the build began, or this is another launch's build.
    if (it == tasks_.end() || it->second.launch.gateway_token != built.token) continue;
    Task& task = it->second;
    task.process.awaiting_network = false;
    // Stopped meanwhile: a held shepherd died of the stop's SIGTERM.
    if (task.ended() || task.stopping()) continue;
    if (!built.network.ok()) {
      const std::string why = "cannot load the network: " + built.network.status().message();
      if (task.process.held == nullptr) {  // re-attached, running: it goes on without its plane
        LOG(ERROR) << TaskLogName(task.launch.request) << ": " << why;
        continue;
      }
      FailHeld(task, why);
      continue;
    }
    planes_.OpenBuilt(task, std::move(built.network).value());
    StartHeld(task);
  }
}

void TaskManager::StartHeld(Task& task) {
  if (task.process.held == nullptr || task.process.awaiting_network ||
      task.process.awaiting_board) {
    return;
  }
  const std::shared_ptr<SpawnedProcess> held = std::move(task.process.held);
  if (Status s = held->Release(task.process.start); !s.ok()) {
    Lose(task, "cannot start the task: " + s.message());
  }
}

void TaskManager::FailHeld(Task& task, const std::string& why, v1::TaskState as) {
  LOG(WARNING) << TaskLogName(task.launch.request) << " failed to start: " << why;
  task.process.held.reset();
  task.SetStop(TaskStop{as, why, clock_.NowMs()});
  RecordStop(task);
  SignalGroup(task.process.pid, SIGKILL);  // held: its command never ran
}

std::vector<TaskManager::TaskView> TaskManager::RunningTasks() const {
  std::vector<TaskView> out;
  for (const auto& [key, task] : tasks_) {
    if (!task.ended())
      out.push_back(TaskView{key, task.launch.request.tenant(), task.launch.request.tenant_job_id(),
                             task.launch.board, task.launch.resources, planes_.Counted(task)});
  }
  return out;
}

std::vector<v1::TaskUsage> TaskManager::UsageChanges() {
  // A task's checkpoint directory is looked at this often: a readdir, not on every heartbeat.
  constexpr int64_t kCheckpointScanMs = 2000;
  const int64_t now_ms = clock_.NowMs();
  std::vector<v1::TaskUsage> out;
  for (auto& [key, task] : tasks_) {
    if (task.ended()) continue;
    v1::SpikeUsage now = planes_.Counted(task);
    const bool counted = !google::protobuf::util::MessageDifferencer::Equals(now, task.usage);
    bool checkpointed = false;
    if (checkpoints_.Kept(task.launch.request) &&
        now_ms - task.checkpoint_seen_ms >= kCheckpointScanMs) {
      task.checkpoint_seen_ms = now_ms;
      v1::Checkpoint latest = checkpoints_.Latest(CheckpointIdOf(task.launch.request));
      if (!google::protobuf::util::MessageDifferencer::Equals(latest, task.checkpoint)) {
        task.checkpoint = std::move(latest);
        checkpointed = true;
      }
    }
    if (!counted && !checkpointed && task.note_sent) continue;
    task.usage = now;
    v1::TaskUsage u;
    u.set_job_id(key.job_id);
    u.set_index(key.index);
    u.set_attempt(key.attempt);
    *u.mutable_usage() = std::move(now);
    if (checkpointed) *u.mutable_checkpoint() = task.checkpoint;
    if (!task.note_sent) u.set_detail(task.note);
    task.note_sent = true;
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace snn
