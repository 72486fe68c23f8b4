// Each task's spike plane in the spike gateway: the network its job carries, loaded on its
// board (a model is expanded off the io thread by the network builder; a task without one gets
// cores that only take spikes), and the spike counts the gateway keeps for it.
// Thread contract: agent io thread only; `wake` is called from the builder's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/base/clock.h"
#include "nodeagent/boards/task_boards.h"
#include "nodeagent/hal/network_builder.h"
#include "nodeagent/spikes/spike_gateway.h"
#include "nodeagent/tasks/task.h"

namespace snn {

class TaskPlanes {
 public:
  // `gateway` (not owned; null: no planes, every call does nothing).
  TaskPlanes(const Clock& clock, SpikeGateway* gateway, TaskBoards& boards, uint32_t burst_ms);

  // Prepares the task's network on its board: its plane opens at once, or, for a model, once
  // the builder has built it (`*building`; TakeBuilt returns it, OpenBuilt opens its plane).
  Status Open(const Task& task, bool* building);
  // The builds that ended since the last call (none before the first build).
  std::vector<NetworkBuilder::Finished> TakeBuilt();
  void OpenBuilt(const Task& task, std::unique_ptr<SpikeNetwork> network);
  // The task's counts as the gateway has them now (its last ones once it ended).
  v1::SpikeUsage Counted(const Task& task) const;
  // Called from the builder's thread once a build ends: the owner should take it soon.
  void set_wake(std::function<void()> wake) { wake_ = std::move(wake); }

 private:
  const Clock& clock_;
  SpikeGateway* const gateway_;
  TaskBoards& boards_;
  const uint32_t burst_ms_;
  std::function<void()> wake_;
  std::unique_ptr<NetworkBuilder> builder_;  // made at the first build; stops first
};

}  // namespace snn
