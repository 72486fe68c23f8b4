#include "cli/host_network.h"

#include <cmath>
#include <random>

#include "common/model/model.h"
#include "common/model/nir_dynamics.h"
#include "nodeagent/hal/lif_network.h"

namespace snn {
namespace {

constexpr uint64_t kHostStateBytes = uint64_t{2} << 30;
constexpr double kMinWindowS = 1, kMaxWindowS = 60;
constexpr uint64_t kEnoughSpikes = 20'000;
constexpr double kMaxWork = 5e8;  // neuron updates plus synaptic events

}  // namespace

std::pair<size_t, uint32_t> HostNetwork::Locate(const wire::Spike& s) const {
  for (size_t i = layers.size(); i-- > 0;) {
    if (s.core >= layers[i].first_core) {
      return {i, (s.core - layers[i].first_core) * kNeuronsPerCore + s.neuron};
    }
  }
  return {0, s.neuron};
}

wire::Spike HostNetwork::Address(const HostLayer& layer, uint32_t neuron) const {
  wire::Spike s;
  s.core = static_cast<uint16_t>(layer.first_core + neuron / kNeuronsPerCore);
  s.neuron = static_cast<uint16_t>(neuron % kNeuronsPerCore);
  return s;
}

Result<HostNetwork> BuildHostNetwork(const v1::Model& model) {
  HostNetwork h;
  uint64_t cores = 0;
  for (const auto& p : model.populations()) {
    HostLayer l;
    l.name = p.name();
    l.first_core = static_cast<uint32_t>(cores);
    l.size = static_cast<uint32_t>(p.size());
    l.input = p.role() == "input";
    l.output = p.role() == "output";
    l.graded = model.dynamics() == "nir" && NirKindIsGraded(p.nir().kind());
    h.layers.push_back(l);
    cores += (static_cast<uint64_t>(p.size()) + HostNetwork::kNeuronsPerCore - 1) /
             HostNetwork::kNeuronsPerCore;
  }
  if (cores > 65535) return InvalidArgument("the model is too large to simulate on this host");
  SimNetworkLimits limits;
  limits.num_cores = static_cast<uint32_t>(cores);
  limits.neurons_per_core = HostNetwork::kNeuronsPerCore;
  limits.spikes_per_step = 0;
  limits.max_state_bytes = kHostStateBytes;
  limits.memory_share = "snnctl's limit on this host";
  if (model.dynamics() == "nir") {
    auto net = NirNetwork::Build(model, limits, /*graded_outputs=*/true);
    if (!net.ok()) return net.status();
    h.nir = net->get();
    h.net = std::move(*net);
  } else {
    auto net = LifNetwork::Build(model, limits);
    if (!net.ok()) return net.status();
    h.net = std::move(*net);
  }
  return h;
}

Result<MeasuredRate> MeasureRate(const v1::Model& model, double input_rate_hz, uint64_t seed) {
  const double step_s = model.timestep_ms() / 1000;
  const double chance = input_rate_hz * step_s;
  if (chance > 1) {
    return InvalidArgument("inputs at " + std::to_string(static_cast<int64_t>(input_rate_hz)) +
                           " Hz would fire more than once a " +
                           std::to_string(model.timestep_ms()) + " ms step; at most " +
                           std::to_string(static_cast<int64_t>(1 / step_s)) + " Hz");
  }
  auto built = BuildHostNetwork(model);
  if (!built.ok()) return built.status();
  HostNetwork& h = *built;
  uint64_t neurons = 0;
  for (const HostLayer& l : h.layers) neurons += l.size;
  // Each step updates every neuron; each spike reaches its synapses (the mean fan-out).
  const double fan_out = EstimateModel(model, HostNetwork::kNeuronsPerCore, 0).synapses /
                         static_cast<double>(std::max<uint64_t>(1, neurons));
  const uint64_t min_steps = static_cast<uint64_t>(std::ceil(kMinWindowS / step_s));
  const uint64_t max_steps = static_cast<uint64_t>(std::ceil(kMaxWindowS / step_s));
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution fires(std::min(1.0, chance));
  std::vector<wire::Spike> in, out(4096);
  MeasuredRate m;
  auto work = [&] {
    return static_cast<double>(m.steps) * static_cast<double>(neurons) +
           static_cast<double>(h.net->counters().delivered) * fan_out;
  };
  while (m.steps < max_steps &&
         (m.steps < min_steps || h.net->counters().delivered < kEnoughSpikes)) {
    if (m.steps > 0 && work() > kMaxWork) {
      m.work_bound = true;
      break;
    }
    in.clear();
    for (const HostLayer& l : h.layers) {
      if (!l.input) continue;
      for (uint32_t i = 0; i < l.size; ++i) {
        if (!fires(rng)) continue;
        wire::Spike s = h.Address(l, i);
        s.step = h.net->now_step();
        in.push_back(s);
      }
    }
    h.net->Inject(in.data(), in.size());
    h.net->Step(1);
    while (h.net->ReadOutput(out.data(), out.size()) > 0) {
    }
    ++m.steps;
  }
  m.simulated_s = static_cast<double>(m.steps) * step_s;
  m.spikes_per_s = static_cast<double>(h.net->counters().delivered) / m.simulated_s;
  return m;
}

}  // namespace snn
