#include "cli/simulate_command.h"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <map>

#include "cli/format.h"
#include "cli/host_network.h"
#include "cli/model_import.h"
#include "cli/session.h"

namespace snn {
namespace {

// Reads the input spikes by step, each checked against the model's input layers.
Result<std::map<uint32_t, std::vector<wire::Spike>>> ReadInputs(const std::string& path,
                                                                const HostNetwork& h,
                                                                uint32_t steps) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("cannot read the inputs " + path);
  std::map<std::string, const HostLayer*> inputs;
  std::string names;
  for (const HostLayer& l : h.layers) {
    if (!l.input) continue;
    inputs[l.name] = &l;
    names += (names.empty() ? "" : ", ") + l.name;
  }
  std::map<uint32_t, std::vector<wire::Spike>> by_step;
  std::string line;
  for (uint64_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#' || line.rfind("step", 0) == 0) continue;
    const std::string where = path + " line " + std::to_string(number) + ": ";
    const size_t a = line.find(','), b = line.rfind(',');
    if (a == std::string::npos || a == b) {
      return InvalidArgument(where + "'" + line.substr(0, 80) + "' is not step,layer,neuron");
    }
    uint32_t step = 0, neuron = 0;
    const std::string layer = line.substr(a + 1, b - a - 1);
    auto [p1, e1] = std::from_chars(line.data(), line.data() + a, step);
    auto [p2, e2] = std::from_chars(line.data() + b + 1, line.data() + line.size(), neuron);
    if (e1 != std::errc() || p1 != line.data() + a || e2 != std::errc() ||
        p2 != line.data() + line.size()) {
      return InvalidArgument(where + "'" + line.substr(0, 80) +
                             "': step and neuron must be whole numbers");
    }
    auto it = inputs.find(layer);
    if (it == inputs.end()) {
      return InvalidArgument(where + "'" + layer +
                             "' is not an input layer (the model's: " + names + ")");
    }
    if (neuron >= it->second->size) {
      return InvalidArgument(where + "input '" + layer + "' has " +
                             std::to_string(it->second->size) + " neurons, not " +
                             std::to_string(neuron + 1));
    }
    if (step >= steps) continue;  // past the run: never reached
    wire::Spike s = h.Address(*it->second, neuron);
    s.step = step;
    by_step[step].push_back(s);
  }
  return by_step;
}

}  // namespace

int Simulate(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2 || o.inputs_file.empty() || o.steps == 0 || o.out_dir.empty()) {
    return Fail(err, InvalidArgument("usage: snnctl simulate MODEL --inputs FILE --steps N "
                                     "--out FILE [--dt MS]"));
  }
  auto model = LoadModelOfJob(o.args[1], o.step_ms, o.setting("reset"));
  if (!model.ok()) return Fail(err, model.status());
  auto built = BuildHostNetwork(*model);
  if (!built.ok()) return Fail(err, built.status());
  HostNetwork& h = *built;
  auto inputs = ReadInputs(o.inputs_file, h, o.steps);
  if (!inputs.ok()) return Fail(err, inputs.status());
  std::ofstream file(o.out_dir, std::ios::trunc);
  if (!file) return Fail(err, InvalidArgument("cannot write " + o.out_dir));
  file << "step,layer,neuron,value\n";
  std::vector<wire::Spike> spikes(4096);
  uint64_t output_spikes = 0, values = 0;
  char number[40];
  for (uint32_t step = 0; step < o.steps; ++step) {
    auto it = inputs->find(step);
    if (it != inputs->end()) h.net->Inject(it->second.data(), it->second.size());
    h.net->Step(1);
    for (size_t n; (n = h.net->ReadOutput(spikes.data(), spikes.size())) > 0;) {
      for (size_t k = 0; k < n; ++k) {
        const auto [layer, neuron] = h.Locate(spikes[k]);
        file << spikes[k].step << ',' << h.layers[layer].name << ',' << neuron << ",1\n";
        ++output_spikes;
      }
    }
    for (size_t l = 0; h.nir != nullptr && l < h.layers.size(); ++l) {
      if (!h.layers[l].output || !h.layers[l].graded) continue;
      const std::vector<double> v = h.nir->GradedOutput(l);
      for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == 0) continue;
        std::snprintf(number, sizeof number, "%.17g", v[i]);
        file << step << ',' << h.layers[l].name << ',' << i << ',' << number << '\n';
        ++values;
      }
    }
  }
  file.close();
  if (!file) return Fail(err, InvalidArgument("cannot write " + o.out_dir));
  const double seconds = o.steps * model->timestep_ms() / 1000;
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.1f", h.net->counters().delivered / seconds);
  out << "Simulated " << o.steps << " steps of " << model->timestep_ms() << " ms ("
      << (model->dynamics() == "nir" ? "NIR dynamics" : "the board's LIF neurons")
      << "): " << h.net->counters().delivered << " spikes in all (" << rate << " spikes/s), "
      << output_spikes << " output spikes";
  if (values > 0) out << ", " << values << " output values";
  out << "; wrote " << o.out_dir << "\n";
  return 0;
}

}  // namespace snn
