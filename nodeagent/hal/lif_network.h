// The simulated board's networks. LifNetwork runs leaky integrate-and-fire neurons: populations
// are laid onto the task's logical cores in model order, each population on cores of its own
// (neurons_per_core to a core); time advances in fixed steps of the model's timestep; a spike
// reaches its targets `delay_steps` later (at least 1). The board processes at most
// `spikes_per_step` spikes a step: the excess waits in a backlog (delayed, and counted) and what
// the backlog cannot hold is dropped (and counted). SinkNetwork stands for a task without a
// model: its cores take any spike and nothing comes back.
// Thread contract: as SpikeNetwork.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "common/base/status.h"
#include "nodeagent/hal/laid_out_network.h"
#include "nodeagent/hal/spike_network.h"
#include "proto/model.pb.h"

namespace snn {

class LifNetwork : public LaidOutNetwork {
 public:
  // `model` must have passed ValidateModel. Fails if it needs more cores than the task has,
  // more synapses or more memory than the simulator holds; never throws.
  static Result<std::unique_ptr<LifNetwork>> Build(const v1::Model& model,
                                                   const SimNetworkLimits& limits);

  void Step(uint32_t steps) override;

 private:
  static Result<std::unique_ptr<LifNetwork>> BuildUnchecked(const v1::Model& model,
                                                            const SimNetworkLimits& limits);

  struct Synapse {
    uint32_t target;
    uint32_t delay;
    float weight;
  };
  struct Neuron {
    float v = 0;
    uint32_t refractory_left = 0;
  };
  struct Dynamics {  // a population's
    float decay = 0, v_rest = 0, v_reset = 0, v_threshold = 0;
    uint32_t refractory_steps = 0;
  };

  explicit LifNetwork(const SimNetworkLimits& limits) : LaidOutNetwork(limits) {}
  Status Connect(const v1::Model& model);
  void StepOnce();
  void Route(uint32_t gid);

  std::vector<Dynamics> dynamics_;       // by population, as placements_
  std::vector<uint64_t> synapse_begin_;  // CSR by source gid (size neurons + 1)
  std::vector<Synapse> synapses_;
  std::vector<Neuron> neurons_;
  std::vector<std::vector<float>> input_ring_;  // by step % ring size, by gid
  std::vector<uint8_t> fired_;                  // by gid, this step
  std::deque<uint32_t> backlog_;                // fired, not yet processed by the board
};

class SinkNetwork : public SpikeNetwork {
 public:
  explicit SinkNetwork(const SimNetworkLimits& limits) : limits_(limits) {}
  bool Addressable(uint16_t core, uint16_t neuron) const override {
    return core < limits_.num_cores && neuron < limits_.neurons_per_core;
  }
  void Inject(const wire::Spike* spikes, size_t n) override { counters_.delivered += n; }
  void Step(uint32_t steps) override { step_ += steps; }
  size_t ReadOutput(wire::Spike* out, size_t max) override { return 0; }
  uint32_t now_step() const override { return step_; }
  wire::UsageCounters counters() const override { return counters_; }

 private:
  SimNetworkLimits limits_;
  uint32_t step_ = 0;
  wire::UsageCounters counters_;
};

}  // namespace snn
