// Model files: parse, validate, estimate, then build the simulated network a board would load
// (with small limits; the NIR engine for dynamics "nir") and run it a few steps. Nothing may
// crash or allocate past the limits.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/model/model.h"
#include "nodeagent/hal/nir_network.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto model = snn::ParseModelJson(text);
  if (!model.ok()) return 0;
  (void)snn::EstimateModel(*model, 256, 10);
  snn::SimNetworkLimits limits;
  limits.num_cores = 64;
  limits.neurons_per_core = 256;
  limits.spikes_per_step = 1000;
  limits.max_synapses = 200'000;
  limits.max_state_bytes = 64 << 20;
  auto net = snn::BuildNetwork(*model, limits);
  if (!net.ok()) return 0;
  snn::wire::Spike spike{};
  if ((*net)->Addressable(0, 0)) (*net)->Inject(&spike, 1);
  (*net)->Step(3);
  snn::wire::Spike out[64];
  (void)(*net)->ReadOutput(out, 64);
  return 0;
}
