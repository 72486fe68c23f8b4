// snn-example-nir: an example task that runs the job's model (a NIR file or a JSON model, given
// to snnctl as `model:`) on its board through the spike gateway. It reads the network the agent
// wrote for it ($SNN_MODEL), finds where each population lies (populations fill the task's
// logical cores in the model's order, each starting on a core of its own), drives every input
// neuron with a fixed pseudo-random spike train, advances the network and prints how many spikes
// each output neuron gave, and the most active one (a classifier's answer). Exit 0 once the
// network ran; 1 if the gateway or the model could not be used.
//   snn-example-nir [--steps S] [--rate P]   (P: chance an input neuron fires each step)
#include <google/protobuf/util/json_util.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "client/gateway_client.h"
#include "proto/model.pb.h"

namespace {

struct Layout {
  uint32_t first_core = 0, size = 0;
};

bool ReadModel(snn::v1::Model* model) {
  const char* path = std::getenv("SNN_MODEL");
  if (path == nullptr) {
    std::fprintf(stderr, "snn-example-nir: SNN_MODEL is not set: the job names no model\n");
    return false;
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || !google::protobuf::util::JsonStringToMessage(text.str(), model).ok()) {
    std::fprintf(stderr, "snn-example-nir: cannot read the network in %s\n", path);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t steps = 100;
  double rate = 0.2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--steps") == 0) steps = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--rate") == 0) rate = std::atof(argv[i + 1]);
  }
  snn::v1::Model model;
  if (!ReadModel(&model)) return 1;
  try {
    snn::GatewayClient gw = snn::GatewayClient::FromEnvironment();
    const uint32_t npc = gw.neurons_per_core();
    std::map<std::string, Layout> layout;
    uint32_t core = 0;
    for (const auto& p : model.populations()) {
      layout[p.name()] = Layout{core, static_cast<uint32_t>(p.size())};
      core += static_cast<uint32_t>((p.size() + npc - 1) / npc);
    }
    std::printf("model %s: %d populations on %u of %u logical cores, %u neurons per core\n",
                model.name().c_str(), model.populations_size(), core, gw.num_cores(), npc);
    std::mt19937_64 rng(42);
    std::bernoulli_distribution fires(rate);
    std::vector<snn::Spike> input;
    for (const auto& p : model.populations()) {
      if (p.role() != "input") continue;
      const Layout& l = layout[p.name()];
      for (uint32_t step = 1; step <= steps; ++step) {
        for (uint32_t i = 0; i < l.size; ++i) {
          if (!fires(rng)) continue;
          input.push_back(snn::Spike{static_cast<uint16_t>(l.first_core + i / npc),
                                     static_cast<uint16_t>(i % npc), step});
        }
      }
    }
    gw.Inject(input);
    const uint32_t reached = gw.Step(steps + 10);
    const std::vector<snn::Spike> out = gw.ReadOutput();
    std::printf("injected %zu input spikes over %u steps; advanced to step %u; %zu output spikes\n",
                input.size(), steps, reached, out.size());
    for (const auto& p : model.populations()) {
      if (p.role() != "output") continue;
      const Layout& l = layout[p.name()];
      std::vector<uint64_t> count(l.size, 0);
      for (const snn::Spike& s : out) {
        const uint32_t i = (s.core - l.first_core) * npc + s.neuron;
        if (s.core >= l.first_core && i < l.size) ++count[i];
      }
      uint32_t best = 0;
      for (uint32_t i = 0; i < l.size; ++i) {
        if (count[i] > count[best]) best = i;
        if (l.size <= 32) {
          std::printf("  %s[%u]: %llu spikes\n", p.name().c_str(), i,
                      static_cast<unsigned long long>(count[i]));
        }
      }
      std::printf("most active output neuron: %s[%u]\n", p.name().c_str(), best);
    }
    const snn::wire::UsageCounters u = gw.Usage();
    std::printf("usage: injected %llu, delivered %llu, outputs %llu\n",
                static_cast<unsigned long long>(u.injected),
                static_cast<unsigned long long>(u.delivered),
                static_cast<unsigned long long>(u.outputs));
    return 0;
  } catch (const snn::GatewayError& e) {
    std::fprintf(stderr, "snn-example-nir: %s\n", e.what());
    return 1;
  }
}
