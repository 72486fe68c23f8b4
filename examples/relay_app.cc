// snn-example-relay: an example task for the spike gateway. Its network (etc/models/relay.json,
// loaded by the agent from the job's model) relays each input neuron's spike through a hidden
// population to the output neuron of the same index, one step a hop. The app fires input
// neuron i at step 3i, advances the network, reads the output spikes and checks that each
// arrived at out[i] two steps later. Exit 0 if all did. With --flood S it then injects as
// fast as the gateway admits for S seconds and prints the rate its KSPS budget allowed.
//   snn-example-relay [--neurons N] [--steps S] [--flood SECONDS]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client/gateway_client.h"
#include "common/base/clock.h"

namespace {

// Populations lie on logical cores in the model's order, each starting on a core of its own.
snn::Spike Address(uint32_t first_core, uint32_t i, uint32_t neurons_per_core, uint32_t step) {
  return snn::Spike{static_cast<uint16_t>(first_core + i / neurons_per_core),
                    static_cast<uint16_t>(i % neurons_per_core), step};
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t neurons = 8, steps = 40;
  double flood_s = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--neurons") == 0)
      neurons = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--steps") == 0) steps = static_cast<uint32_t>(std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--flood") == 0) flood_s = std::atof(argv[i + 1]);
  }
  try {
    snn::GatewayClient gw = snn::GatewayClient::FromEnvironment();
    const uint32_t npc = gw.neurons_per_core();
    const uint32_t cores_per_population = (neurons + npc - 1) / npc;
    const uint32_t out_core = 2 * cores_per_population;
    std::printf("connected to the spike gateway: %u logical cores, %u neurons per core\n",
                gw.num_cores(), npc);

    std::vector<snn::Spike> input;
    for (uint32_t i = 0; i < neurons; ++i) input.push_back(Address(0, i, npc, 3 * i));
    gw.Inject(input);
    std::printf("injected %zu spikes into population 'in' (neuron i at step 3i)\n", input.size());
    const uint32_t reached = gw.Step(steps);
    const std::vector<snn::Spike> out = gw.ReadOutput();
    std::printf("advanced to step %u; %zu output spikes\n", reached, out.size());

    uint32_t relayed = 0;
    for (const snn::Spike& s : out) {
      const uint32_t i = (s.core - out_core) * npc + s.neuron;
      const bool expected = s.core >= out_core && i < neurons && s.step == 3 * i + 2;
      std::printf("  out[%u] fired at step %u%s\n", i, s.step, expected ? "" : "  (unexpected)");
      relayed += expected ? 1 : 0;
    }
    if (flood_s > 0) {
      // Input spikes, 1000 a batch, all for the next step; the gateway paces them.
      const std::vector<snn::Spike> batch(1000, Address(0, 0, npc, reached));
      const snn::Stopwatch flooding;
      uint64_t sent = 0;
      double elapsed = 0;
      while (elapsed < flood_s) {
        gw.Inject(batch);
        sent += batch.size();
        elapsed = flooding.Seconds();
      }
      std::printf("flood: %llu spikes in %.2f s = %.1f KSPS (budget SNN_MAX_KSPS=%s)\n",
                  static_cast<unsigned long long>(sent), elapsed, sent / elapsed / 1000.0,
                  std::getenv("SNN_MAX_KSPS") ? std::getenv("SNN_MAX_KSPS") : "?");
    }
    const snn::wire::UsageCounters u = gw.Usage();
    std::printf(
        "usage: injected %llu, delivered %llu, outputs %llu, throttled %llu\n",
        static_cast<unsigned long long>(u.injected), static_cast<unsigned long long>(u.delivered),
        static_cast<unsigned long long>(u.outputs), static_cast<unsigned long long>(u.throttled));
    std::printf("result: %u of %u spikes relayed to their output neuron 2 steps later\n", relayed,
                neurons);
    return relayed == neurons && out.size() == neurons ? 0 : 1;  // checked before any flood
  } catch (const snn::GatewayError& e) {
    std::fprintf(stderr, "snn-example-relay: %s\n", e.what());
    return 2;
  }
}
