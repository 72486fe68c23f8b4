#include "nodeagent/hal/nir_network.h"

#include <algorithm>
#include <cmath>

#include "common/model/nir_dynamics.h"
#include "common/model/projection_stages.h"

namespace snn {
namespace {

// Element i of a parameter given once or per neuron; `fallback` when not given.
double At(const google::protobuf::RepeatedField<double>& v, uint32_t i, double fallback) {
  if (v.empty()) return fallback;
  return v.size() == 1 ? v[0] : v[static_cast<int>(i)];
}

}  // namespace

Result<std::unique_ptr<NirNetwork>> NirNetwork::Build(const v1::Model& model,
                                                      const SimNetworkLimits& limits,
                                                      bool graded_outputs) {
  if (limits.neurons_per_core == 0) return InvalidArgument("the board has 0 neurons per core");
  if (model.dynamics() != "nir") return InvalidArgument("the model's dynamics are not nir");
  SNN_RETURN_IF_ERROR(ValidateNirDynamics(model));
  SNN_RETURN_IF_ERROR(CheckCores(model, limits));
  std::unique_ptr<NirNetwork> net(new NirNetwork(limits));
  const double step_s = model.timestep_ms() / 1000;
  uint64_t neurons = 0;
  for (const auto& p : model.populations()) neurons += static_cast<uint64_t>(p.size());
  const double neuron_bytes = static_cast<double>(sizeof(Params) + 2 * sizeof(double) +
                                                  sizeof(uint64_t) + sizeof(uint32_t) + 1);
  if (neuron_bytes * static_cast<double>(neurons) > static_cast<double>(limits.max_state_bytes)) {
    return InvalidArgument("the network's " + std::to_string(neurons) +
                           " neurons need more than the simulator's " +
                           std::to_string(limits.max_state_bytes >> 20) + " MiB");
  }
  try {
    for (const auto& p : model.populations()) {
      const v1::NirNeuron& n = p.nir();
      const bool output = p.role() == "output", graded = NirKindIsGraded(n.kind());
      if (output && graded && !graded_outputs) {
        return InvalidArgument("output layer '" + p.name() + "' (" + n.kind() +
                               ") gives values, not spikes, and the board returns spikes only; "
                               "snnctl simulate writes its values");
      }
      static const std::map<std::string, Kind> kinds = {{"Input", Kind::kInput},
                                                        {"LIF", Kind::kLif},
                                                        {"CubaLIF", Kind::kCubaLif},
                                                        {"CubaLI", Kind::kCubaLi},
                                                        {"IF", Kind::kIf},
                                                        {"LI", Kind::kLi},
                                                        {"I", Kind::kI},
                                                        {"Threshold", Kind::kThreshold},
                                                        {"Output", Kind::kOutput}};
      net->kind_.push_back(kinds.at(n.kind()));
      for (uint32_t i = 0; i < static_cast<uint32_t>(p.size()); ++i) {
        Params q;
        q.a_mem = n.tau().empty() ? 0 : step_s / At(n.tau(), i, 1);
        q.a_syn = n.tau_syn().empty() ? 0 : step_s / At(n.tau_syn(), i, 1);
        q.r = At(n.r(), i, 1);
        q.w_in = At(n.w_in(), i, 1);
        q.v_leak = At(n.v_leak(), i, 0);
        q.threshold = At(n.v_threshold(), i, 0);
        q.subtract = n.v_reset().empty();
        q.v_reset = At(n.v_reset(), i, 0);
        q.bias = At(n.bias(), i, 0);
        net->params_.push_back(q);
      }
      net->Place(p.name(), static_cast<uint32_t>(p.size()), output);
      net->graded_.push_back(graded);
    }
    net->FinishLayout();
    const uint32_t gid = net->neurons();
    net->v_.assign(gid, 0.0);
    net->i_.assign(gid, 0.0);
    net->injected_now_.assign(gid, 0);
    SNN_RETURN_IF_ERROR(net->Connect(model));
  } catch (const std::bad_alloc&) {
    return Status(Code::kResourceExhausted, "the host has no memory left for the model's network");
  }
  return net;
}

Status NirNetwork::Connect(const v1::Model& model) {
  std::map<std::string, const Placement*> by_name;
  for (const Placement& l : placements_) by_name[l.name] = &l;
  double expected = 0;
  uint32_t max_delay = 0;
  for (const auto& p : model.projections()) {
    expected += StageSynapseBound(p, by_name[p.from()]->size, by_name[p.to()]->size);
    max_delay = std::max(max_delay, p.delay_steps());
  }
  if (expected > static_cast<double>(limits_.max_synapses)) {
    return InvalidArgument(
        "the model has about " + std::to_string(static_cast<uint64_t>(expected)) +
        " synapses; the simulator holds at most " + std::to_string(limits_.max_synapses));
  }
  const double n = static_cast<double>(v_.size());
  const double bytes = n * (sizeof(Params) + 2 * sizeof(double) + sizeof(uint64_t) + 1) +
                       expected * sizeof(Synapse) + (max_delay + 1.0) * n * sizeof(double);
  if (bytes > static_cast<double>(limits_.max_state_bytes)) {
    return InvalidArgument("the network needs about " +
                           std::to_string(static_cast<uint64_t>(bytes / (1 << 20))) +
                           " MiB (neurons, synapses and " + std::to_string(max_delay) +
                           " steps of delay); the simulator holds at most " +
                           std::to_string(limits_.max_state_bytes >> 20) + " MiB" +
                           (limits_.memory_share.empty() ? "" : " (" + limits_.memory_share + ")"));
  }
  synapse_begin_.assign(v_.size() + 1, 0);
  for (const auto& p : model.projections()) {
    const Placement& from = *by_name[p.from()];
    ForEachStageSynapse(p, from.size, [&](uint32_t s, uint32_t, double) {
      ++synapse_begin_[from.first_gid + s + 1];
    });
  }
  for (size_t i = 1; i < synapse_begin_.size(); ++i) synapse_begin_[i] += synapse_begin_[i - 1];
  synapses_.resize(synapse_begin_.back());
  std::vector<uint64_t> fill(synapse_begin_.begin(), synapse_begin_.end() - 1);
  for (const auto& p : model.projections()) {
    const Placement &from = *by_name[p.from()], &to = *by_name[p.to()];
    ForEachStageSynapse(p, from.size, [&](uint32_t s, uint32_t t, double w) {
      synapses_[fill[from.first_gid + s]++] = Synapse{to.first_gid + t, p.delay_steps(), w};
    });
  }
  input_ring_.assign(max_delay + 1, std::vector<double>(v_.size(), 0.0));
  return Status::Ok();
}

void NirNetwork::Step(uint32_t steps) {
  for (uint32_t k = 0; k < steps; ++k) {
    budget_ = limits_.spikes_per_step == 0 ? UINT64_MAX : limits_.spikes_per_step;
    for (size_t waiting = backlog_.size(); waiting > 0 && budget_ > 0; --waiting) {
      ++counters_.delayed;
      --budget_;
      Route(backlog_.front(), 1.0);
      backlog_.pop_front();
    }
    std::vector<uint32_t> injected;
    TakeInjected([&](uint32_t gid) {
      injected_now_[gid] = 1;
      injected.push_back(gid);
    });
    for (size_t l = 0; l < placements_.size(); ++l) StepLayer(l);
    for (uint32_t gid : injected) injected_now_[gid] = 0;
    ++step_;
  }
}

// One layer's neurons, one step: the input that reached them (plus their constant bias), their
// equation (docs/nir.md), then their spike or their value passed on.
void NirNetwork::StepLayer(size_t layer) {
  const Placement& l = placements_[layer];
  const bool graded = graded_[layer];
  const Kind kind = kind_[layer];
  std::vector<double>& input = input_ring_[step_ % input_ring_.size()];
  for (uint32_t gid = l.first_gid; gid < l.first_gid + l.size; ++gid) {
    const Params& q = params_[gid];
    const double x = input[gid] + q.bias;
    input[gid] = 0;
    double& v = v_[gid];
    bool spike = false;
    switch (kind) {
      case Kind::kInput:
        break;
      case Kind::kLif:
        v += q.a_mem * (q.v_leak - v + q.r * x);
        spike = v > q.threshold;
        break;
      case Kind::kCubaLif:
      case Kind::kCubaLi: {
        const double current = i_[gid];
        i_[gid] = current + q.a_syn * (q.w_in * x - current);
        v += q.a_mem * (q.v_leak - v + q.r * current);
        spike = v > q.threshold;
        break;
      }
      case Kind::kIf:
        v += q.r * x;
        spike = v > q.threshold;
        break;
      case Kind::kLi:
        v += q.a_mem * (q.v_leak - v + q.r * x);
        break;
      case Kind::kI:
        v += q.r * x;
        break;
      case Kind::kThreshold:
        spike = x > q.threshold;
        break;
      case Kind::kOutput:
        v = x;
        break;
    }
    if (graded) {
      if (v != 0) Route(gid, v);
      continue;
    }
    if (spike && kind != Kind::kThreshold) v = q.subtract ? v - q.threshold : q.v_reset;
    if (spike || injected_now_[gid]) Fire(gid);
  }
}

void NirNetwork::Fire(uint32_t gid) {
  if (budget_ > 0) {
    --budget_;
    Route(gid, 1.0);
  } else if (backlog_.size() >= limits_.backlog_limit) {
    ++counters_.dropped;
  } else {
    backlog_.push_back(gid);
  }
}

void NirNetwork::Route(uint32_t gid, double value) {
  const size_t ring = input_ring_.size();
  for (uint64_t k = synapse_begin_[gid]; k < synapse_begin_[gid + 1]; ++k) {
    const Synapse& s = synapses_[k];
    input_ring_[(step_ + s.delay) % ring][s.target] += s.weight * value;
  }
  if (graded_[population_of(gid)]) return;
  ++counters_.delivered;
  Output(gid);
}

std::vector<double> NirNetwork::GradedOutput(size_t layer) const {
  const Placement& l = placements_.at(layer);
  return std::vector<double>(v_.begin() + l.first_gid, v_.begin() + l.first_gid + l.size);
}

Result<std::unique_ptr<SpikeNetwork>> BuildNetwork(const v1::Model& model,
                                                   const SimNetworkLimits& limits) {
  if (model.dynamics() == "nir") {
    auto net = NirNetwork::Build(model, limits);
    if (!net.ok()) return net.status();
    return std::unique_ptr<SpikeNetwork>(std::move(*net));
  }
  auto net = LifNetwork::Build(model, limits);
  if (!net.ok()) return net.status();
  return std::unique_ptr<SpikeNetwork>(std::move(*net));
}

}  // namespace snn
