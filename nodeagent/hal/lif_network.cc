#include "nodeagent/hal/lif_network.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/model/projection_stages.h"

namespace snn {
namespace {

// Calls fn(source, target, weight) for every connection of projection `index`. Random
// connectivity is seeded by the projection's position, so a model always wires the same way.
template <typename Fn>
void ForEachConnection(const v1::Projection& p, int index, uint32_t from_size, uint32_t to_size,
                       Fn&& fn) {
  auto weight = [&](uint64_t i) {
    return static_cast<float>(p.weights_size() > 0 ? p.weights(static_cast<int>(i)) : p.weight());
  };
  if (p.connectivity() == "stages") {
    ForEachStageSynapse(p, from_size, fn);
  } else if (p.connectivity() == "one_to_one") {
    for (uint32_t i = 0; i < std::min(from_size, to_size); ++i) fn(i, i, weight(i));
  } else if (p.connectivity() == "random") {
    std::mt19937_64 rng(0x5eed0000u + static_cast<uint64_t>(index));
    std::bernoulli_distribution coin(p.probability());
    for (uint32_t s = 0; s < from_size; ++s) {
      for (uint32_t t = 0; t < to_size; ++t) {
        if (coin(rng)) fn(s, t, static_cast<float>(p.weight()));
      }
    }
  } else {  // all_to_all
    for (uint32_t s = 0; s < from_size; ++s) {
      for (uint32_t t = 0; t < to_size; ++t) fn(s, t, weight(uint64_t{s} * to_size + t));
    }
  }
}

double ExpectedConnections(const v1::Projection& p, double from_size, double to_size) {
  if (p.connectivity() == "stages") {
    return StageSynapseBound(p, static_cast<int64_t>(from_size), static_cast<int64_t>(to_size));
  }
  if (p.connectivity() == "one_to_one") return std::min(from_size, to_size);
  if (p.connectivity() == "random") return p.probability() * from_size * to_size;
  return from_size * to_size;
}

}  // namespace

Result<std::unique_ptr<LifNetwork>> LifNetwork::Build(const v1::Model& model,
                                                      const SimNetworkLimits& limits) {
  // The estimate bounds what is allocated; bad_alloc past it (a busy host) is still an answer.
  try {
    return BuildUnchecked(model, limits);
  } catch (const std::bad_alloc&) {
    return Status(Code::kResourceExhausted, "the host has no memory left for the model's network");
  }
}

Result<std::unique_ptr<LifNetwork>> LifNetwork::BuildUnchecked(const v1::Model& model,
                                                               const SimNetworkLimits& limits) {
  SNN_RETURN_IF_ERROR(CheckCores(model, limits));
  std::unique_ptr<LifNetwork> net(new LifNetwork(limits));
  const double dt = model.timestep_ms();
  for (const auto& p : model.populations()) {
    net->Place(p.name(), static_cast<uint32_t>(p.size()), p.role() == "output");
    Dynamics d;
    d.decay = static_cast<float>(std::exp(-dt / p.neuron().tau_m_ms()));
    d.v_rest = static_cast<float>(p.neuron().v_rest());
    d.v_reset = static_cast<float>(p.neuron().v_reset());
    d.v_threshold = static_cast<float>(p.neuron().v_threshold());
    d.refractory_steps = static_cast<uint32_t>(std::lround(p.neuron().refractory_ms() / dt));
    net->dynamics_.push_back(d);
  }
  net->FinishLayout();
  net->neurons_.resize(net->neurons());
  for (uint32_t i = 0; i < net->neurons(); ++i) {
    net->neurons_[i].v = net->dynamics_[net->population_of(i)].v_rest;
  }
  net->fired_.assign(net->neurons(), 0);
  SNN_RETURN_IF_ERROR(net->Connect(model));
  return net;
}

Status LifNetwork::Connect(const v1::Model& model) {
  auto layout_of = [&](const std::string& name) -> const Placement& {
    return *FindPopulation(name);  // ValidateModel checked the names
  };
  double expected = 0;
  uint32_t max_delay = 1;
  for (const auto& p : model.projections()) {
    expected += ExpectedConnections(p, layout_of(p.from()).size, layout_of(p.to()).size);
    max_delay = std::max(max_delay, p.delay_steps());
  }
  if (expected > static_cast<double>(limits_.max_synapses)) {
    return InvalidArgument(
        "the model has about " + std::to_string(static_cast<uint64_t>(expected)) +
        " synapses; the simulator holds at most " + std::to_string(limits_.max_synapses));
  }
  // Per neuron: its state, its fired flag, its synapse offset, and a slot per step of delay.
  const double neurons = static_cast<double>(neurons_.size());
  const double bytes = neurons * (sizeof(Neuron) + 1 + sizeof(uint64_t) + sizeof(uint32_t)) +
                       expected * sizeof(Synapse) +
                       (static_cast<double>(max_delay) + 1) * neurons * sizeof(float);
  if (bytes > static_cast<double>(limits_.max_state_bytes)) {
    return InvalidArgument("the network needs about " +
                           std::to_string(static_cast<uint64_t>(bytes / (1 << 20))) +
                           " MiB (neurons, synapses and " + std::to_string(max_delay) +
                           " steps of delay); the simulator holds at most " +
                           std::to_string(limits_.max_state_bytes >> 20) + " MiB" +
                           (limits_.memory_share.empty() ? "" : " (" + limits_.memory_share + ")"));
  }
  // Two passes over the same (seeded) connections: count per source, then fill.
  synapse_begin_.assign(neurons_.size() + 1, 0);
  for (int i = 0; i < model.projections_size(); ++i) {
    const auto& p = model.projections(i);
    const auto &from = layout_of(p.from()), &to = layout_of(p.to());
    ForEachConnection(p, i, from.size, to.size, [&](uint32_t s, uint32_t, float) {
      ++synapse_begin_[from.first_gid + s + 1];
    });
  }
  for (size_t i = 1; i < synapse_begin_.size(); ++i) synapse_begin_[i] += synapse_begin_[i - 1];
  synapses_.resize(synapse_begin_.back());
  std::vector<uint64_t> fill(synapse_begin_.begin(), synapse_begin_.end() - 1);
  for (int i = 0; i < model.projections_size(); ++i) {
    const auto& p = model.projections(i);
    const auto &from = layout_of(p.from()), &to = layout_of(p.to());
    const uint32_t delay = std::max<uint32_t>(1, p.delay_steps());
    ForEachConnection(p, i, from.size, to.size, [&](uint32_t s, uint32_t t, float w) {
      synapses_[fill[from.first_gid + s]++] = Synapse{to.first_gid + t, delay, w};
    });
  }
  input_ring_.assign(max_delay + 1, std::vector<float>(neurons_.size(), 0.0f));
  return Status::Ok();
}

void LifNetwork::Step(uint32_t steps) {
  for (uint32_t i = 0; i < steps; ++i) StepOnce();
}

void LifNetwork::StepOnce() {
  std::vector<float>& input = input_ring_[step_ % input_ring_.size()];
  std::vector<uint32_t> fired;
  auto fire = [&](uint32_t gid, const Dynamics& p) {
    Neuron& n = neurons_[gid];
    n.v = p.v_reset;
    n.refractory_left = p.refractory_steps;
    fired_[gid] = 1;
    fired.push_back(gid);
  };
  for (size_t k = 0; k < placements_.size(); ++k) {
    const Placement& place = placements_[k];
    const Dynamics& p = dynamics_[k];
    for (uint32_t gid = place.first_gid; gid < place.first_gid + place.size; ++gid) {
      Neuron& n = neurons_[gid];
      const float in = input[gid];
      input[gid] = 0;
      if (n.refractory_left > 0) {
        --n.refractory_left;
        n.v = p.v_reset;
        continue;
      }
      n.v = p.v_rest + (n.v - p.v_rest) * p.decay + in;
      if (n.v >= p.v_threshold) fire(gid, p);
    }
  }
  // Injected spikes force their neuron to fire now (once, even if it fired on its own).
  TakeInjected([&](uint32_t gid) {
    if (!fired_[gid]) fire(gid, dynamics_[population_of(gid)]);
  });
  for (uint32_t gid : fired) fired_[gid] = 0;

  // The board processes the oldest spikes first, up to its capacity.
  const size_t waiting_before = backlog_.size();
  for (uint32_t gid : fired) {
    if (backlog_.size() >= limits_.backlog_limit) {
      ++counters_.dropped;
      continue;
    }
    backlog_.push_back(gid);
  }
  uint64_t budget = limits_.spikes_per_step == 0 ? UINT64_MAX : limits_.spikes_per_step;
  size_t processed = 0;
  while (!backlog_.empty() && budget > 0) {
    if (processed < waiting_before) ++counters_.delayed;
    Route(backlog_.front());
    backlog_.pop_front();
    ++processed;
    --budget;
  }
  ++step_;
}

void LifNetwork::Route(uint32_t gid) {
  ++counters_.delivered;
  for (uint64_t i = synapse_begin_[gid]; i < synapse_begin_[gid + 1]; ++i) {
    const Synapse& s = synapses_[i];
    input_ring_[(step_ + s.delay) % input_ring_.size()][s.target] += s.weight;
  }
  Output(gid);
}

}  // namespace snn
