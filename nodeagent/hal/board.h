// The hardware abstraction layer: one neuromorphic board as the agent sees it. Backends: `sim`
// (nodeagent/hal/sim_board.h); vendor backends will load through a C ABI.
// Thread contract: a Board is used from the agent's io thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/base/status.h"
#include "nodeagent/hal/spike_network.h"
#include "proto/model.pb.h"
#include "proto/node.pb.h"

namespace snn {

struct BoardDriverRef;

struct TaskKey {
  uint64_t job_id = 0;
  uint32_t index = 0;
  uint32_t attempt = 0;
  auto operator<=>(const TaskKey&) const = default;
};

// A network's construction, prepared on the io thread and run on any other: it holds copies of
// all it needs. Building a large model takes seconds and much memory, so the agent runs it off
// its event loop (nodeagent/hal/network_builder.h).
using NetworkBuild = std::function<Result<std::unique_ptr<SpikeNetwork>>()>;

class Board {
 public:
  virtual ~Board() = default;

  // Mesh, capacities, type, dead cores and health, as the board reports them now.
  virtual v1::BoardInfo Describe() const = 0;

  // Sets up `cores` (logical i -> cores[i]) for a task; fails if any is dead or taken.
  virtual Status Configure(const TaskKey& task, const std::vector<v1::CoreXY>& cores) = 0;

  // Resets the task's cores and frees them.
  virtual void Release(const TaskKey& task) = 0;

  // Clears whatever the task's cores hold (neurons, synapses, queued spikes) and keeps them the
  // task's: an experiment service does it between two users' turns. The simulated board builds
  // every experiment's network afresh and keeps nothing on its cores between them: it checks
  // the cores are the task's and counts the reset.
  virtual Status Reset(const TaskKey& task) = 0;

  // Prepares loading a task's network onto its `num_cores` logical cores: `model` (validated),
  // or none (the cores take spikes and produce none). A failed board refuses here; a model too
  // large for the task's share, when built. The spike gateway drives the handle built.
  virtual Result<NetworkBuild> PrepareNetwork(const v1::Model* model, uint32_t num_cores) = 0;
  // Prepares and builds on the calling thread.
  Result<std::unique_ptr<SpikeNetwork>> LoadNetwork(const v1::Model* model, uint32_t num_cores) {
    auto build = PrepareNetwork(model, num_cores);
    if (!build.ok()) return build.status();
    return (*build)();
  }

  // The driver process that runs the board (docs/drivers.md), or null: the agent simulates it.
  virtual const BoardDriverRef* driver() const { return nullptr; }

  // Measures spike throughput and latency; Describe() reports them from then on
  // (measured_ksps, latency_us) beside the configured capacity.
  virtual void Fingerprint() {}

  // Fault injection (`snnctl node fault`): a core dies, the board fails, slows or works again.
  // Only simulated boards support it; the agent then brings its tasks in line with Describe().
  virtual Status InjectFault(const v1::SimFaultRequest& fault) {
    return FailedPrecondition("faults can be injected only on simulated boards (type " +
                              Describe().type() + " is not)");
  }
};

}  // namespace snn
