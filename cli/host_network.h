// A model run on this host with the simulated board's own engine (nodeagent/hal: NirNetwork for
// NIR models, LifNetwork for JSON ones), for `snnctl simulate` and `snnctl estimate`: the same
// code the board runs, with no capacity limit (every spike processed in its step), layers laid
// on cores of 4,096 neurons in model order.
// Thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/base/status.h"
#include "nodeagent/hal/nir_network.h"
#include "proto/model.pb.h"

namespace snn {

struct HostLayer {
  std::string name;
  uint32_t first_core = 0, size = 0;
  bool input = false, output = false, graded = false;
};

struct HostNetwork {
  static constexpr uint32_t kNeuronsPerCore = 4096;
  std::unique_ptr<SpikeNetwork> net;
  NirNetwork* nir = nullptr;  // net, when the model's dynamics are nir
  std::vector<HostLayer> layers;

  // The layer (index into `layers`) and neuron an address names.
  std::pair<size_t, uint32_t> Locate(const wire::Spike& s) const;
  // The address of a layer's neuron.
  wire::Spike Address(const HostLayer& layer, uint32_t neuron) const;
};

// Fails with the engine's own words (too large for this host: 2 GiB of state at most).
Result<HostNetwork> BuildHostNetwork(const v1::Model& model);

struct MeasuredRate {
  double spikes_per_s = 0;  // every layer's spikes, inputs included
  uint64_t steps = 0;
  double simulated_s = 0;
  bool work_bound = false;  // stopped by the bound on work, before its window's end
};

// Runs the model with every input neuron firing at random (Bernoulli each step, `seed`) at
// `input_rate_hz`, for at least 1 s of simulated time and then until 20,000 spikes or 60 s,
// and at most 500 million units of work (neuron updates plus synaptic events, counted from the
// mean fan-out): bounded whatever the model. Refuses a rate above one spike a step.
Result<MeasuredRate> MeasureRate(const v1::Model& model, double input_rate_hz, uint64_t seed);

}  // namespace snn
