// Where a model's neurons sit on a task's logical cores, as the simulated board lays them out
// (nodeagent/hal/lif_network.h): populations in model order, each on cores of its own,
// `neurons_per_core` to a core. Turns a (population, neuron) into a (core, neuron) address and
// back, so that experiments speak of populations, not cores.
// Pure; thread-safe.
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

  // The address of `population`'s neuron `neuron`; an error naming the populations (or the
  // population's size) if there is none.
  Result<wire::Spike> Of(const std::string& population, uint32_t neuron) const;
  // The population and index at `core`/`neuron`; false if none is there.
  bool NameOf(uint16_t core, uint16_t neuron, std::string* population, uint32_t* index) const;

 private:
  struct Layout {
    std::string name;
    uint32_t size = 0, first_core = 0;
  };
  std::vector<Layout> layouts_;
  std::vector<uint32_t> population_of_core_;  // by logical core
  uint32_t neurons_per_core_;
};

// The populations of `model`, for errors: "in (784), hidden (100), out (10)".
std::string PopulationList(const v1::Model& model);

}  // namespace snn
