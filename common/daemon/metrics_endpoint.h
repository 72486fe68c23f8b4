// A Prometheus /metrics endpoint for a daemon (prometheus-cpp's exposer, on its own threads).
// It serves a registry of counters and histograms that events feed, and gauges of the daemon's
// state that `snapshot` computes at each scrape on the daemon's io thread, so state is read only
// where it lives and costs nothing between scrapes. A wedged io thread makes scrapes time out
// (after 2 s) with only the registry's metrics.
// Thread contract: Start on the io thread; the snapshot runs there; scrapes on the exposer's.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/base/status.h"
#include "common/rpc/asio.h"

namespace snn {

using MetricsSnapshot = std::function<std::vector<prometheus::MetricFamily>()>;

class MetricsEndpoint {
 public:
  // Listens on `listen` (HOST:PORT, port 0 picks one).
  static Result<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& listen, asio::io_context& io,
      std::shared_ptr<prometheus::Registry> registry, MetricsSnapshot snapshot);
  ~MetricsEndpoint();
  uint16_t port() const { return port_; }

 private:
  MetricsEndpoint() = default;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<prometheus::Collectable> state_;
  uint16_t port_ = 0;
};

// Helpers for snapshots: one gauge (or counter) family, and a sample in it.
prometheus::MetricFamily GaugeFamily(std::string name, std::string help);
prometheus::MetricFamily CounterFamily(std::string name, std::string help);
void AddSample(prometheus::MetricFamily& family, double value,
               std::vector<prometheus::ClientMetric::Label> labels = {});

// Writes `port` to `path` atomically (a temp file renamed), for tests and scripts.
Status WritePortFile(const std::string& path, uint16_t port);

}  // namespace snn
