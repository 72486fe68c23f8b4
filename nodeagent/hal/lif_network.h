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
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/base/status.h"
#include "nodeagent/hal/spike_network.h"
#include "proto/model.pb.h"

namespace snn {

struct SimNetworkLimits {
  uint32_t num_cores = 0;  // the task's logical cores
  uint32_t neurons_per_core = 0;
  uint64_t spikes_per_step = 0;      // board capacity (ksps x timestep_ms); 0: unlimited
  uint64_t backlog_limit = 1 << 20;  // spikes waiting for the board beyond which spikes drop
  uint64_t input_limit = 1 << 22;    // injected spikes waiting for their step
  uint64_t output_limit = 1 << 22;   // output spikes waiting to be read
  uint64_t max_synapses = 50'000'000;
  // All the simulator's state for one network (neurons, synapses, the delay ring): a model
  // needing more is refused before anything is allocated.
  uint64_t max_state_bytes = uint64_t{1} << 30;
  std::string memory_share;  // where max_state_bytes comes from, for the refusal's words
};

class LifNetwork : public SpikeNetwork {
 public:
  // `model` must have passed ValidateModel. Fails if it needs more cores than the task has,
  // more synapses or more memory than the simulator holds; never throws.
  static Result<std::unique_ptr<LifNetwork>> Build(const v1::Model& model,
                                                   const SimNetworkLimits& limits);

  bool Addressable(uint16_t core, uint16_t neuron) const override;
  void Inject(const wire::Spike* spikes, size_t n) override;
  void Step(uint32_t steps) override;
  size_t ReadOutput(wire::Spike* out, size_t max) override;
  uint32_t now_step() const override { return step_; }
  wire::UsageCounters counters() const override { return counters_; }

  // The (core, neuron) of a population's i-th neuron, for tests and examples.
  Result<wire::Spike> AddressOf(const std::string& population, uint32_t i) const;

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
  struct PopulationLayout {
    std::string name;
    uint32_t first_gid = 0, size = 0, first_core = 0;
    float decay = 0, v_rest = 0, v_reset = 0, v_threshold = 0;
    uint32_t refractory_steps = 0;
    bool output = false;
  };

  explicit LifNetwork(const SimNetworkLimits& limits) : limits_(limits) {}
  Status Connect(const v1::Model& model);
  void StepOnce();
  void Route(uint32_t gid);
  wire::Spike Address(uint32_t gid) const;

  SimNetworkLimits limits_;
  std::vector<PopulationLayout> populations_;
  std::vector<uint32_t> population_of_;   // by gid
  std::vector<uint32_t> core_first_gid_;  // by logical core
  std::vector<uint32_t> core_neurons_;    // by logical core
  std::vector<uint64_t> synapse_begin_;   // CSR by source gid (size neurons + 1)
  std::vector<Synapse> synapses_;
  std::vector<Neuron> neurons_;
  std::vector<std::vector<float>> input_ring_;          // by step % ring size, by gid
  std::vector<uint8_t> fired_;                          // by gid, this step
  std::map<uint32_t, std::vector<uint32_t>> injected_;  // step -> gids
  uint64_t injected_waiting_ = 0;
  std::deque<uint32_t> backlog_;  // fired, not yet processed by the board
  std::deque<wire::Spike> outputs_;
  uint32_t step_ = 0;
  wire::UsageCounters counters_;
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
