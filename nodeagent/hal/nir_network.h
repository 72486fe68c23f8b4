// The simulated board's engine for models with dynamics "nir" (a NIR file's network): each layer
// steps its own NIR node's equations with its own per-neuron parameters, forward Euler at the
// model's step, layers in the model's order within a step, so that a spike reaches a later layer
// in the same step and a loop takes a step (docs/nir.md states every rule; the reference
// executor in tests/nir/ is written from that page). LI, I and Output layers pass values on
// rather than spikes: each step their value goes through their synapses times the weight.
// Layout, addresses, inputs, outputs and the board's capacity are as LifNetwork's: populations
// on cores of their own in model order; at most `spikes_per_step` spikes a step are processed,
// the excess delayed (counted) and past the backlog dropped (counted): a run within the board's
// capacity is exact, one beyond it says how far it was not.
// Thread contract: as SpikeNetwork.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/base/status.h"
#include "nodeagent/hal/laid_out_network.h"
#include "nodeagent/hal/lif_network.h"
#include "nodeagent/hal/spike_network.h"
#include "proto/model.pb.h"

namespace snn {

class NirNetwork : public LaidOutNetwork {
 public:
  // `model` must have passed ValidateModel with dynamics "nir". Layers whose output is a value
  // (LI, I, Output) can only be output layers when `graded_outputs` is set: the board returns
  // spikes, `snnctl simulate` reads values (GradedOutput).
  static Result<std::unique_ptr<NirNetwork>> Build(const v1::Model& model,
                                                   const SimNetworkLimits& limits,
                                                   bool graded_outputs = false);

  void Step(uint32_t steps) override;

  // A graded output layer's values after the last step, by neuron (layers in model order).
  std::vector<double> GradedOutput(size_t layer) const;

 private:
  enum class Kind { kInput, kLif, kCubaLif, kCubaLi, kIf, kLi, kI, kThreshold, kOutput };
  struct Synapse {
    uint32_t target;
    uint32_t delay;
    double weight;
  };
  struct Params {  // per neuron
    double a_mem = 0, a_syn = 0, r = 1, w_in = 1, v_leak = 0, threshold = 0, bias = 0;
    double v_reset = 0;
    bool subtract = true;  // reset by subtracting the threshold (no v_reset given)
  };

  explicit NirNetwork(const SimNetworkLimits& limits) : LaidOutNetwork(limits) {}
  Status Connect(const v1::Model& model);
  void StepLayer(size_t layer);
  void Route(uint32_t gid, double value);
  void Fire(uint32_t gid);

  std::vector<Kind> kind_;               // by layer (placements_, model order)
  std::vector<bool> graded_;             // by layer: passes values on, not spikes
  std::vector<Params> params_;           // by gid
  std::vector<double> v_, i_;            // by gid: potential, synaptic current
  std::vector<uint64_t> synapse_begin_;  // CSR by source gid
  std::vector<Synapse> synapses_;
  std::vector<std::vector<double>> input_ring_;  // by step % ring size, by gid
  std::vector<uint8_t> injected_now_;            // by gid, this step
  std::deque<uint32_t> backlog_;                 // fired, beyond the board's capacity so far
  uint64_t budget_ = 0;                          // spikes the board may still process this step
};

// The network for a model: NirNetwork for dynamics "nir", LifNetwork otherwise.
Result<std::unique_ptr<SpikeNetwork>> BuildNetwork(const v1::Model& model,
                                                   const SimNetworkLimits& limits);

}  // namespace snn
