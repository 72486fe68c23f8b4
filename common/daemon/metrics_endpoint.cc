#include "common/daemon/metrics_endpoint.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>

namespace snn {
namespace {

// Runs the snapshot on the io thread for each scrape.
class StateCollector : public prometheus::Collectable {
 public:
  StateCollector(asio::io_context& io, MetricsSnapshot snapshot)
      : io_(io), snapshot_(std::move(snapshot)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    auto result = std::make_shared<std::promise<std::vector<prometheus::MetricFamily>>>();
    auto future = result->get_future();
    asio::post(io_, [result, snapshot = snapshot_] { result->set_value(snapshot()); });
    if (future.wait_for(std::chrono::seconds(2)) != std::future_status::ready) return {};
    return future.get();
  }

 private:
  asio::io_context& io_;
  MetricsSnapshot snapshot_;
};

}  // namespace

Result<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& listen, asio::io_context& io, std::shared_ptr<prometheus::Registry> registry,
    MetricsSnapshot snapshot) {
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint());
  try {
    endpoint->exposer_ = std::make_unique<prometheus::Exposer>(listen, /*num_threads=*/1);
  } catch (const std::exception& e) {
    return Unavailable("cannot serve metrics on " + listen + ": " + e.what());
  }
  const auto ports = endpoint->exposer_->GetListeningPorts();
  if (ports.empty()) return Unavailable("cannot serve metrics on " + listen);
  endpoint->port_ = static_cast<uint16_t>(ports.front());
  endpoint->registry_ = std::move(registry);
  endpoint->state_ = std::make_shared<StateCollector>(io, std::move(snapshot));
  endpoint->exposer_->RegisterCollectable(endpoint->registry_);
  endpoint->exposer_->RegisterCollectable(endpoint->state_);
  return endpoint;
}

MetricsEndpoint::~MetricsEndpoint() = default;

prometheus::MetricFamily GaugeFamily(std::string name, std::string help) {
  return {std::move(name), std::move(help), prometheus::MetricType::Gauge, {}};
}

prometheus::MetricFamily CounterFamily(std::string name, std::string help) {
  return {std::move(name), std::move(help), prometheus::MetricType::Counter, {}};
}

void AddSample(prometheus::MetricFamily& family, double value,
               std::vector<prometheus::ClientMetric::Label> labels) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (family.type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  family.metric.push_back(std::move(m));
}

Status WritePortFile(const std::string& path, uint16_t port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << port << "\n";
    if (!out) return Unavailable("cannot write the port file " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Unavailable("cannot write the port file " + path);
  }
  return Status::Ok();
}

}  // namespace snn
