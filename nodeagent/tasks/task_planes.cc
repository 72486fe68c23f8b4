#include "nodeagent/tasks/task_planes.h"

#include "common/model/model.h"

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

TaskPlanes::TaskPlanes(const Clock& clock, SpikeGateway* gateway, TaskBoards& boards,
                       uint32_t burst_ms)
    : clock_(clock), gateway_(gateway), boards_(boards), burst_ms_(burst_ms) {}

Status TaskPlanes::Open(const Task& task, bool* building) {
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
    OpenBuilt(task, std::move(network).value());
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

void TaskPlanes::OpenBuilt(const Task& task, std::unique_ptr<SpikeNetwork> network) {
  SpikePlaneConfig config;
  config.key = task.launch.key;
  config.token = task.launch.gateway_token;
  config.ksps = task.launch.resources.ksps();
  config.burst_ms = burst_ms_;
  config.num_cores = static_cast<uint32_t>(task.mapping.cores_size());
  config.neurons_per_core = boards_.board(task.launch.board)->Describe().neurons_per_core();
  gateway_->AddTask(std::move(config), std::move(network));
}

std::vector<NetworkBuilder::Finished> TaskPlanes::TakeBuilt() {
  if (builder_ == nullptr) return {};
  return builder_->TakeFinished();
}

v1::SpikeUsage TaskPlanes::Counted(const Task& task) const {
  if (task.ended() || gateway_ == nullptr) return task.usage;
  auto plane = gateway_->Find(task.launch.key);
  if (!plane) return task.usage;
  return ToProto(plane->Usage(), plane->RateKsps(clock_.NowUs()));
}

}  // namespace snn
