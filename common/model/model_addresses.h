// Where a model's neurons sit on a task's logical cores, as the simulated board lays them out
// (nodeagent/hal/lif_network.h): populations in model order, each on cores of its own,
// `neurons_per_core` to a core. Turns a (population, neuron) into a (core, neuron) address and
// back, so that experiments speak of populations, not cores.
// Memory grows with the populations only. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/spike_wire.h"
#include "common/base/status.h"
#include "proto/model.pb.h"

namespace snn {

class ModelAddresses {
 public:
  ModelAddresses(const v1::Model& model, uint32_t neurons_per_core);

  // Whether the model has `population` and it has a neuron `neuron`; if not, why, naming the
  // populations (or the population's size). Needs no board: the master checks with it.
  Status Check(const std::string& population, uint32_t neuron) const;
  // The address of `population`'s neuron `neuron`, or why there is none (Check's reasons, and
  // a neuron beyond the cores a task can address).
  Result<wire::Spike> Of(const std::string& population, uint32_t neuron) const;
  // The population and index at `core`/`neuron`; false if none is there.
  bool NameOf(uint16_t core, uint16_t neuron, std::string* population, uint32_t* index) const;

 private:
  struct Layout {
    std::string name;
    uint64_t size = 0, first_core = 0;
  };
  // In model order, so by first core: a population's cores are found by binary search, and
  // nothing here grows with the neurons (a model may name 100 million in a population).
  std::vector<Layout> layouts_;
  uint32_t neurons_per_core_;
};

}  // namespace snn
