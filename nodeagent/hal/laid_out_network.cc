#include "nodeagent/hal/laid_out_network.h"

#include <algorithm>

namespace snn {
namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace

Status LaidOutNetwork::CheckCores(const v1::Model& model, const SimNetworkLimits& limits) {
  if (limits.neurons_per_core == 0) return InvalidArgument("the board has 0 neurons per core");
  uint64_t needed = 0;
  for (const auto& p : model.populations()) {
    needed += CeilDiv(static_cast<uint64_t>(p.size()), limits.neurons_per_core);
  }
  if (needed > limits.num_cores) {
    return InvalidArgument("the model needs " + std::to_string(needed) + " cores at " +
                           std::to_string(limits.neurons_per_core) +
                           " neurons per core; the task has " + std::to_string(limits.num_cores));
  }
  return Status::Ok();
}

void LaidOutNetwork::Place(const std::string& name, uint32_t size, bool output) {
  Placement p;
  p.name = name;
  p.first_gid = neurons();
  p.size = size;
  p.first_core = next_core_;
  p.output = output;
  const uint64_t per_core = limits_.neurons_per_core;
  const uint64_t cores = CeilDiv(size, per_core);
  for (uint64_t c = 0; c < cores; ++c) {
    core_first_gid_.push_back(p.first_gid + static_cast<uint32_t>(c * per_core));
    core_neurons_.push_back(
        static_cast<uint32_t>(std::min<uint64_t>(per_core, size - c * per_core)));
  }
  next_core_ += static_cast<uint32_t>(cores);
  population_of_.insert(population_of_.end(), size, static_cast<uint32_t>(placements_.size()));
  placements_.push_back(std::move(p));
}

void LaidOutNetwork::FinishLayout() {
  core_first_gid_.resize(limits_.num_cores, 0);
  core_neurons_.resize(limits_.num_cores, 0);
}

bool LaidOutNetwork::Addressable(uint16_t core, uint16_t neuron) const {
  return core < core_neurons_.size() && neuron < core_neurons_[core];
}

void LaidOutNetwork::Inject(const wire::Spike* spikes, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (injected_waiting_ >= limits_.input_limit) {
      counters_.dropped += n - i;
      return;
    }
    const wire::Spike& s = spikes[i];
    injected_[std::max(s.step, step_)].push_back(core_first_gid_[s.core] + s.neuron);
    ++injected_waiting_;
  }
}

void LaidOutNetwork::QueueOutput(uint32_t gid) {
  if (outputs_.size() >= limits_.output_limit) {
    ++counters_.dropped;
    return;
  }
  wire::Spike out = Address(gid);
  out.step = step_;
  outputs_.push_back(out);
  ++counters_.outputs;
}

wire::Spike LaidOutNetwork::Address(uint32_t gid) const {
  const Placement& p = placements_[population_of_[gid]];
  const uint32_t local = gid - p.first_gid;
  wire::Spike s;
  s.core = static_cast<uint16_t>(p.first_core + local / limits_.neurons_per_core);
  s.neuron = static_cast<uint16_t>(local % limits_.neurons_per_core);
  return s;
}

size_t LaidOutNetwork::ReadOutput(wire::Spike* out, size_t max) {
  const size_t n = std::min(max, outputs_.size());
  std::copy_n(outputs_.begin(), n, out);
  outputs_.erase(outputs_.begin(), outputs_.begin() + static_cast<std::ptrdiff_t>(n));
  return n;
}

const LaidOutNetwork::Placement* LaidOutNetwork::FindPopulation(const std::string& name) const {
  for (const Placement& p : placements_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Result<wire::Spike> LaidOutNetwork::AddressOf(const std::string& population, uint32_t i) const {
  const Placement* p = FindPopulation(population);
  if (p == nullptr) return NotFound("no population '" + population + "'");
  if (i >= p->size) {
    return InvalidArgument("population '" + population + "' has no neuron " + std::to_string(i));
  }
  return Address(p->first_gid + i);
}

}  // namespace snn
