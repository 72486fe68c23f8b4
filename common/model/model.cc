#include "common/model/model.h"

#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "common/base/file_util.h"
#include "common/base/rect_allocator.h"
#include "common/model/nir_dynamics.h"
#include "common/model/projection_stages.h"

namespace snn {
namespace {

constexpr int64_t kMaxPopulation = 100'000'000;
// Hardware delays are a few dozen steps; a thousand times that is still a model, not an attack.
constexpr uint32_t kMaxDelaySteps = 65'536;

std::string Name(const v1::Projection& p, int i) {
  return "projection " + std::to_string(i) + " (" + p.from() + " -> " + p.to() + ")";
}

double FanIn(const v1::Projection& p, int64_t from_size) {
  if (p.connectivity() == "one_to_one") return 1;
  if (p.connectivity() == "random") return p.probability() * from_size;
  return static_cast<double>(from_size);
}

double MeanWeight(const v1::Projection& p) {
  if (p.weights_size() == 0) return p.weight();
  double sum = 0;
  for (double w : p.weights()) sum += w;
  return sum / p.weights_size();
}

// The synapses of a projection and the sum of their weights.
std::pair<double, double> SynapsesAndWeight(const v1::Projection& p, int64_t from, int64_t to) {
  if (p.connectivity() != "stages") {
    const double fan_in = FanIn(p, from);
    return {fan_in * static_cast<double>(to), fan_in * static_cast<double>(to) * MeanWeight(p)};
  }
  double synapses = 0, weight = 0;
  ForEachStageSynapse(p, static_cast<uint32_t>(from), [&](uint32_t, uint32_t, float w) {
    ++synapses;
    weight += w;
  });
  return {synapses, weight};
}

// Firing rate (Hz) of a LIF neuron under a constant drive (potential units per second).
double LifRate(const v1::LifParams& n, double drive) {
  const double tau = n.tau_m_ms() / 1000.0, ref = n.refractory_ms() / 1000.0;
  const double v_ss = n.v_rest() + drive * tau;
  if (v_ss <= n.v_threshold()) return 0;
  const double t = tau * std::log((v_ss - n.v_reset()) / (v_ss - n.v_threshold()));
  return 1.0 / (t + ref);
}

}  // namespace

Result<v1::Model> ParseModelJson(const std::string& json) {
  v1::Model model;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(json, &model, options);
  if (!status.ok()) {
    // The parser's message may quote the file across lines, control bytes and all: its first
    // line, printable, is the one line an error gets.
    std::string line(status.message().substr(0, status.message().find('\n')));
    for (char& c : line) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    if (line.size() > 200) line = line.substr(0, 200) + "...";
    return InvalidArgument("model is not valid JSON for a model: " + line);
  }
  SNN_RETURN_IF_ERROR(ValidateModel(model));
  return model;
}

Result<v1::Model> LoadModelFile(const std::string& path) {
  auto text = ReadWholeFile(path, "the model file");
  if (!text.ok()) return text.status();
  auto model = ParseModelJson(*text);
  if (!model.ok()) return Status(model.status().code(), path + ": " + model.status().message());
  return model;
}

bool LooksLikeNir(const std::string& path) {
  // Never opens a FIFO or a device, which would block or read for ever.
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".nir") == 0) return true;
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, sizeof magic);
  return in.gcount() == 8 && std::string(magic, 8) == std::string("\x89HDF\r\n\x1a\n", 8);
}

namespace {

// A population's LIF parameters, with their defaults filled in.
Status CheckNeuron(v1::Population& p) {
  v1::LifParams& n = *p.mutable_neuron();
  if (!n.has_tau_m_ms()) n.set_tau_m_ms(20);
  if (!n.has_v_rest()) n.set_v_rest(0);
  if (!n.has_v_reset()) n.set_v_reset(0);
  if (!n.has_v_threshold()) n.set_v_threshold(1);
  if (!n.has_refractory_ms()) n.set_refractory_ms(2);
  if (!(n.tau_m_ms() > 0)) {
    return InvalidArgument("population '" + p.name() + "': tau_m_ms must be greater than 0");
  }
  if (!(n.v_threshold() > n.v_reset())) {
    return InvalidArgument("population '" + p.name() + "': v_threshold must be above v_reset");
  }
  if (!(n.refractory_ms() >= 0 && n.refractory_ms() <= 1e6)) {
    return InvalidArgument("population '" + p.name() +
                           "': refractory_ms must be between 0 and 1000000");
  }
  for (double v : {n.tau_m_ms(), n.v_rest(), n.v_reset(), n.v_threshold()}) {
    if (!std::isfinite(v)) {
      return InvalidArgument("population '" + p.name() + "': neuron parameters must be finite");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateModel(v1::Model& model) {
  if (!model.has_timestep_ms()) model.set_timestep_ms(1.0);
  // A microsecond to a second: finer steps than a microsecond no board runs, and a step far
  // below it would make a simulated second take forever.
  if (!(model.timestep_ms() >= 0.001 && model.timestep_ms() <= 1000)) {
    return InvalidArgument("timestep_ms must be between 0.001 (1 us) and 1000");
  }
  if (model.populations_size() == 0) return InvalidArgument("the model has no populations");
  if (model.dynamics() != "" && model.dynamics() != "nir") {
    return InvalidArgument("dynamics '" + model.dynamics() +
                           "' is unknown: leave it out (the board's LIF neurons) or give nir");
  }
  std::map<std::string, int64_t> sizes;
  bool has_input = false, has_output = false;
  for (int i = 0; i < model.populations_size(); ++i) {
    v1::Population& p = *model.mutable_populations(i);
    const std::string which = "population " + std::to_string(i);
    if (p.name().empty()) return InvalidArgument(which + " has no name");
    if (sizes.count(p.name()))
      return InvalidArgument("population '" + p.name() + "' appears twice");
    if (p.size() < 1 || p.size() > kMaxPopulation) {
      return InvalidArgument("population '" + p.name() + "' has size " + std::to_string(p.size()) +
                             "; it must be between 1 and " + std::to_string(kMaxPopulation));
    }
    if (p.role() != "" && p.role() != "input" && p.role() != "output" && p.role() != "hidden") {
      return InvalidArgument("population '" + p.name() + "' has role '" + p.role() +
                             "'; use input, output or hidden");
    }
    has_input |= p.role() == "input";
    has_output |= p.role() == "output";
    SNN_RETURN_IF_ERROR(CheckNeuron(p));
    sizes[p.name()] = p.size();
    if (model.dynamics().empty() && p.has_nir()) {
      return InvalidArgument("population '" + p.name() +
                             "' has NIR parameters in a model whose dynamics are not nir");
    }
  }
  if (!has_input) return InvalidArgument("the model needs a population with role 'input'");
  if (!has_output) return InvalidArgument("the model needs a population with role 'output'");
  for (int i = 0; i < model.projections_size(); ++i) {
    v1::Projection& p = *model.mutable_projections(i);
    const std::string which = Name(p, i);
    for (const std::string& end : {p.from(), p.to()}) {
      if (!sizes.count(end)) {
        return InvalidArgument(which + " names an unknown population '" + end + "'");
      }
    }
    if (p.connectivity().empty()) p.set_connectivity("all_to_all");
    const int64_t from = sizes[p.from()], to = sizes[p.to()];
    if (p.connectivity() == "random") {
      if (!(p.probability() > 0 && p.probability() <= 1)) {
        return InvalidArgument(which + ": probability must be in (0, 1]");
      }
      if (p.weights_size() > 0) {
        return InvalidArgument(which + ": random connectivity takes one 'weight', not 'weights'");
      }
    } else if (p.connectivity() == "one_to_one") {
      if (from != to) {
        return InvalidArgument(which + ": one_to_one needs populations of equal size (" +
                               std::to_string(from) + " and " + std::to_string(to) + ")");
      }
    } else if (p.connectivity() == "stages") {
      SNN_RETURN_IF_ERROR(CheckStages(p, from, to, which));
    } else if (p.connectivity() != "all_to_all") {
      return InvalidArgument(which + ": connectivity '" + p.connectivity() +
                             "' is not all_to_all, one_to_one, random or stages");
    }
    if (p.connectivity() != "stages" && p.stages_size() > 0) {
      return InvalidArgument(which + ": only connectivity 'stages' takes stages");
    }
    if (p.weights_size() > 0) {
      if (p.weight() != 0) return InvalidArgument(which + ": give 'weight' or 'weights', not both");
      const int64_t want = p.connectivity() == "one_to_one" ? from : from * to;
      if (p.weights_size() != want) {
        return InvalidArgument(which + ": weights has " + std::to_string(p.weights_size()) +
                               " values; " +
                               (p.connectivity() == "one_to_one"
                                    ? "one_to_one needs " + std::to_string(from)
                                    : "all_to_all needs " + std::to_string(from) + " x " +
                                          std::to_string(to) + " = " + std::to_string(want)));
      }
    }
    for (double w : p.weights()) {
      if (!std::isfinite(w)) return InvalidArgument(which + ": weights must be finite numbers");
    }
    if (!std::isfinite(p.weight()))
      return InvalidArgument(which + ": weight must be a finite number");
    if (p.delay_steps() > kMaxDelaySteps) {
      return InvalidArgument(which + ": delay_steps is " + std::to_string(p.delay_steps()) +
                             "; at most " + std::to_string(kMaxDelaySteps) + " are supported");
    }
  }
  if (model.dynamics() == "nir") return ValidateNirDynamics(model);
  return Status::Ok();
}

ModelEstimate EstimateModel(const v1::Model& model, uint32_t neurons_per_core,
                            double input_rate_hz) {
  ModelEstimate e;
  const uint32_t npc = std::max(1u, neurons_per_core);
  std::map<std::string, int> index;
  for (int i = 0; i < model.populations_size(); ++i) {
    const auto& p = model.populations(i);
    index[p.name()] = i;
    e.neurons += p.size();
    e.cores += (static_cast<uint64_t>(p.size()) + npc - 1) / npc;
  }
  const auto shapes = e.cores <= 256 * 256
                          ? CandidateShapes(static_cast<uint32_t>(e.cores), 256, 256)
                          : decltype(CandidateShapes(1, 256, 256)){};
  if (!shapes.empty()) {
    e.shape_width = shapes[0].first;
    e.shape_height = shapes[0].second;
  }
  // Each projection's drive on a target neuron per spike/s of each source neuron, and its
  // synapses.
  std::vector<double> drive_per_rate(model.projections_size(), 0);
  std::vector<double> fan_in(model.populations_size(), 0);
  for (int k = 0; k < model.projections_size(); ++k) {
    const auto& p = model.projections(k);
    const int64_t from = model.populations(index[p.from()]).size();
    const int64_t to = model.populations(index[p.to()]).size();
    const auto [synapses, weight] = SynapsesAndWeight(p, from, to);
    e.synapses += synapses;
    fan_in[index[p.to()]] += synapses / static_cast<double>(to);
    drive_per_rate[k] = weight / static_cast<double>(to);
  }
  e.max_fan_in = fan_in.empty() ? 0 : *std::max_element(fan_in.begin(), fan_in.end());
  std::vector<double> rate(model.populations_size(), 0);
  for (int i = 0; i < model.populations_size(); ++i) {
    if (model.populations(i).role() == "input") rate[i] = input_rate_hz;
  }
  for (int iteration = 0; iteration < 200; ++iteration) {
    std::vector<double> drive(model.populations_size(), 0);
    for (int k = 0; k < model.projections_size(); ++k) {
      const auto& p = model.projections(k);
      drive[index[p.to()]] += rate[index[p.from()]] * drive_per_rate[k];
    }
    double change = 0;
    for (int i = 0; i < model.populations_size(); ++i) {
      const auto& pop = model.populations(i);
      if (pop.role() == "input") continue;
      const double next = LifRate(pop.neuron(), drive[i] * 1.0);
      change = std::max(change, std::abs(next - rate[i]));
      rate[i] = next;
    }
    if (change < 1e-9) break;
  }
  for (int i = 0; i < model.populations_size(); ++i) {
    e.spikes_per_s += rate[i] * model.populations(i).size();
  }
  return e;
}

}  // namespace snn
