// The spike side of the task manager: measuring boards, opening each task's plane in the
// spike gateway (its network loaded on its board), and reading back what the gateway counted.
#include <glog/logging.h>
#include <google/protobuf/util/message_differencer.h>
#include <signal.h>

#include "common/model/model.h"
#include "nodeagent/tasks/launcher.h"
#include "nodeagent/tasks/task_manager.h"

namespace snn {
namespace {

v1::SpikeUsage ToProto(const wire::UsageCounters& c, double rate_ksps) {
  v1::SpikeUsage u;
  u.set_injected(c.injected);
  u.set_delivered(c.delivered);
  u.set_delayed(c.delayed);
  u.set_dropped(c.dropped);
  u.set_throttled(c.throttled);
  u.set_refused(c.refused);
  u.set_outputs(c.outputs);
  u.set_rate_ksps(rate_ksps);
  return u;
}

}  // namespace

Status TaskManager::OpenSpikePlane(const Task& task, bool* building) {
  *building = false;
  if (gateway_ == nullptr) return Status::Ok();
  // The network comes in the launch request (the master validated it): the agent never opens a
  // path a user named, with its rights or on its thread.
  const v1::TaskSpec& spec = task.launch.request.task();
  if (!spec.has_network() && !spec.resources().model().empty()) {
    return InvalidArgument("the job names model " + spec.resources().model() +
                           " but carries no network: resubmit it with this version's snnctl");
  }
  v1::Model model = spec.network();
  if (spec.has_network()) SNN_RETURN_IF_ERROR(ValidateModel(model));
  Board& board = *boards_.board(task.launch.board);
  auto build = board.PrepareNetwork(spec.has_network() ? &model : nullptr,
                                    static_cast<uint32_t>(task.mapping.cores_size()));
  if (!build.ok()) {
    return Status(build.status().code(), "cannot load the network: " + build.status().message());
  }
  if (!spec.has_network()) {  // cores that only take spikes: nothing to expand
    auto network = (*build)();
    if (!network.ok()) {
      return Status(network.status().code(),
                    "cannot load the network: " + network.status().message());
    }
    OpenPlane(task, std::move(network).value());
    return Status::Ok();
  }
  if (builder_ == nullptr) {
    builder_ = std::make_unique<NetworkBuilder>([this] {
      if (wake_) wake_();
    });
  }
  builder_->Start(task.launch.key, task.launch.gateway_token, std::move(*build));
  *building = true;
  return Status::Ok();
}

void TaskManager::OpenPlane(const Task& task, std::unique_ptr<SpikeNetwork> network) {
  SpikePlaneConfig config;
  config.key = task.launch.key;
  config.token = task.launch.gateway_token;
  config.ksps = task.launch.resources.ksps();
  config.burst_ms = options_.gateway_burst_ms;
  config.num_cores = static_cast<uint32_t>(task.mapping.cores_size());
  config.neurons_per_core = boards_.board(task.launch.board)->Describe().neurons_per_core();
  gateway_->AddTask(std::move(config), std::move(network));
}

void TaskManager::AttachBuiltNetworks() {
  if (builder_ == nullptr) return;
  for (auto& built : builder_->TakeFinished()) {
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
    OpenPlane(task, std::move(built.network).value());
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

v1::SpikeUsage TaskManager::CountedUsage(const Task& task) const {
  if (task.ended() || gateway_ == nullptr) return task.usage;
  auto plane = gateway_->Find(task.launch.key);
  if (!plane) return task.usage;
  return ToProto(plane->Usage(), plane->RateKsps(clock_.NowUs()));
}

std::vector<TaskManager::TaskView> TaskManager::RunningTasks() const {
  std::vector<TaskView> out;
  for (const auto& [key, task] : tasks_) {
    if (!task.ended())
      out.push_back(TaskView{key, task.launch.request.tenant(), task.launch.request.tenant_job_id(),
                             task.launch.board, task.launch.resources, CountedUsage(task)});
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
    v1::SpikeUsage now = CountedUsage(task);
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
