// The HAL's handle on one task's network loaded onto a board: inject spikes, advance time, read
// output spikes. Boards hand these out (Board::LoadNetwork); the spike gateway drives them.
// Addresses are the task's logical cores; the gateway checks them (Addressable) before Inject.
// Thread contract: one thread at a time (the gateway's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "client/spike_wire.h"

namespace snn {

class SpikeNetwork {
 public:
  virtual ~SpikeNetwork() = default;

  // True if (core, neuron) names a neuron of this network.
  virtual bool Addressable(uint16_t core, uint16_t neuron) const = 0;

  // Queues spikes (already checked with Addressable) to fire at their step; a spike for a step
  // already simulated fires at the next one. Spikes the board's input queue cannot hold are
  // dropped and counted.
  virtual void Inject(const wire::Spike* spikes, size_t n) = 0;

  // Advances `steps` time steps.
  virtual void Step(uint32_t steps) = 0;

  // Moves up to `max` output spikes, oldest first, to `out`.
  virtual size_t ReadOutput(wire::Spike* out, size_t max) = 0;

  // The next step to simulate.
  virtual uint32_t now_step() const = 0;

  // delivered, delayed, dropped and outputs (the gateway counts the rest).
  virtual wire::UsageCounters counters() const = 0;
};

}  // namespace snn
