// The spike gateway measured over a real Unix socket with the task client library:
//  1. the sim board's fingerprint (what the agent reports at start);
//  2. enforcement: a task injecting as fast as it can under a 100 KSPS budget, its admitted
//     rate over consecutive 5 s windows;
//  3. throughput: one unthrottled task sending 16384-spike batches, 5 runs of 1 s; the median
//     is the last line, `gateway spikes/s: N`.
//   gateway_bench [--windows N] [--batch N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "client/gateway_client.h"
#include "common/base/clock.h"
#include "nodeagent/hal/lif_network.h"
#include "nodeagent/hal/sim_board.h"
#include "nodeagent/spikes/spike_gateway.h"

namespace {

using Seconds = std::chrono::duration<double>;

std::shared_ptr<snn::TaskSpikePlane> AddSinkTask(snn::SpikeGateway& gw, uint64_t job,
                                                 const std::string& token, uint64_t ksps,
                                                 bool unlimited) {
  snn::SimNetworkLimits limits;
  limits.num_cores = 64;
  limits.neurons_per_core = 256;
  snn::SpikePlaneConfig c;
  c.key = snn::TaskKey{job, 0, 1};
  c.token = token;
  c.ksps = ksps;
  c.unlimited = unlimited;
  c.num_cores = limits.num_cores;
  c.neurons_per_core = limits.neurons_per_core;
  return gw.AddTask(c, std::make_unique<snn::SinkNetwork>(limits));
}

std::vector<snn::Spike> Batch(size_t n) {
  std::vector<snn::Spike> b(n);
  for (size_t i = 0; i < n; ++i) {
    b[i] = snn::Spike{static_cast<uint16_t>(i % 64), static_cast<uint16_t>(i % 256), 0};
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  int windows = 2;
  size_t batch_size = 16384;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--windows") == 0) windows = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--batch") == 0) batch_size = std::strtoul(argv[i + 1], nullptr, 10);
  }
  char tmpl[] = "/tmp/snn-gwbench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  snn::SystemClock clock;
  snn::SpikeGateway gateway(clock, dir + "/gateway.sock");
  if (auto s = gateway.Start(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }

  snn::v1::BoardInfo info;
  info.set_type("sim-v2");
  info.set_width(16);
  info.set_height(16);
  info.set_neurons_per_core(1024);
  info.set_ksps(8000);
  info.set_health(100);
  snn::SimBoard board(info);
  board.Fingerprint();
  const auto described = board.Describe();
  std::printf("fingerprint of a sim-v2 board (capacity %u KSPS): measured %u KSPS, latency %u us\n",
              described.ksps(), described.measured_ksps(), described.latency_us());
  info.set_ksps(1'000'000'000);  // no cap: what this host simulates
  snn::SimBoard uncapped(info);
  uncapped.Fingerprint();
  std::printf("the simulator on this host: %u KSPS\n", uncapped.Describe().measured_ksps());

  // Enforcement at 100 KSPS.
  AddSinkTask(gateway, 1, "budget", 100, false);
  {
    snn::GatewayClient task(gateway.socket_path(), "budget");
    const auto batch = Batch(1000);
    for (int w = 0; w < windows; ++w) {
      const auto start = snn::MonotonicNow();
      uint64_t sent = 0;
      while (Seconds(snn::MonotonicNow() - start).count() < 5.0) {
        task.Inject(batch);
        sent += batch.size();
      }
      const double elapsed = Seconds(snn::MonotonicNow() - start).count();
      std::printf("100 KSPS budget, window %d: %.2f KSPS admitted over %.2f s\n", w + 1,
                  static_cast<double>(sent) / elapsed / 1000.0, elapsed);
    }
  }

  // Unthrottled throughput.
  AddSinkTask(gateway, 2, "unthrottled", 0, true);
  snn::GatewayClient task(gateway.socket_path(), "unthrottled");
  const auto batch = Batch(batch_size);
  std::vector<double> rates;
  for (int run = 0; run < 5; ++run) {
    const auto start = snn::MonotonicNow();
    uint64_t sent = 0;
    while (Seconds(snn::MonotonicNow() - start).count() < 1.0) {
      task.Inject(batch);
      sent += batch.size();
    }
    rates.push_back(static_cast<double>(sent) / Seconds(snn::MonotonicNow() - start).count());
    std::printf("run %d: %.0f spikes/s (batches of %zu)\n", run + 1, rates.back(), batch_size);
  }
  gateway.Stop();
  std::filesystem::remove_all(dir);
  std::sort(rates.begin(), rates.end());
  std::printf("gateway spikes/s: %.0f\n", rates[rates.size() / 2]);
  return 0;
}
