// What the simulated board's two engines (LifNetwork, NirNetwork) share: a model's populations
// laid onto the task's logical cores in model order, each on cores of its own, neurons_per_core
// to a core; spikes coming in by (core, neuron), queued for their step (at most input_limit
// waiting: the rest dropped, and counted); output spikes queued to be read (at most output_limit:
// the rest dropped, and counted).
// Thread contract: as SpikeNetwork.
#pragma once

#include <deque>
#include <map>
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

class LaidOutNetwork : public SpikeNetwork {
 public:
  bool Addressable(uint16_t core, uint16_t neuron) const override;
  void Inject(const wire::Spike* spikes, size_t n) override;
  size_t ReadOutput(wire::Spike* out, size_t max) override;
  uint32_t now_step() const override { return step_; }
  wire::UsageCounters counters() const override { return counters_; }

  // The (core, neuron) of a population's i-th neuron, for tests and examples.
  Result<wire::Spike> AddressOf(const std::string& population, uint32_t i) const;

 protected:
  // A population's place: its neurons are gids first_gid.., on cores first_core..
  struct Placement {
    std::string name;
    uint32_t first_gid = 0, size = 0, first_core = 0;
    bool output = false;
  };

  explicit LaidOutNetwork(const SimNetworkLimits& limits) : limits_(limits) {}
  // Refuses a model that needs more cores than the task has, saying how many it needs.
  static Status CheckCores(const v1::Model& model, const SimNetworkLimits& limits);
  // Places the next population (after CheckCores) on the cores after the last one's.
  void Place(const std::string& name, uint32_t size, bool output);
  // Once every population is placed: the task's other cores have no neurons.
  void FinishLayout();

  uint32_t neurons() const { return static_cast<uint32_t>(population_of_.size()); }
  // The index (in placements_, model order) of the population neuron `gid` is in.
  uint32_t population_of(uint32_t gid) const { return population_of_[gid]; }
  const Placement* FindPopulation(const std::string& name) const;
  // Calls f(gid) for every injected spike due by this step, oldest step first, and forgets it.
  template <typename F>
  void TakeInjected(F&& f) {
    while (!injected_.empty() && injected_.begin()->first <= step_) {
      for (uint32_t gid : injected_.begin()->second) {
        --injected_waiting_;
        f(gid);
      }
      injected_.erase(injected_.begin());
    }
  }
  // Queues neuron `gid`'s spike of this step to be read, if its population is an output.
  void Output(uint32_t gid) {
    if (placements_[population_of_[gid]].output) QueueOutput(gid);
  }

  SimNetworkLimits limits_;
  std::vector<Placement> placements_;  // in model order
  uint32_t step_ = 0;
  wire::UsageCounters counters_;

 private:
  void QueueOutput(uint32_t gid);
  wire::Spike Address(uint32_t gid) const;

  std::vector<uint32_t> population_of_;   // by gid
  std::vector<uint32_t> core_first_gid_;  // by logical core
  std::vector<uint32_t> core_neurons_;    // by logical core
  uint32_t next_core_ = 0;
  std::map<uint32_t, std::vector<uint32_t>> injected_;  // step -> gids
  uint64_t injected_waiting_ = 0;
  std::deque<wire::Spike> outputs_;
};

}  // namespace snn
