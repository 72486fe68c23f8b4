// The master's event metrics for Prometheus: counters and histograms that requests, scheduling
// passes, job starts and store commits feed as they happen. (Gauges of the state are computed
// at each scrape: master/master_state_metrics.h.) Label values are bounded: methods are the
// registered ones, codes the Status codes.
// Thread contract: fed on the io thread; the registry is read by the exposer's thread
// (prometheus-cpp's metrics are safe for that).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "common/base/status.h"

namespace snn {

class MasterMetrics {
 public:
  MasterMetrics();

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

  void ObserveRpc(const std::string& method, Code code, double seconds);
  void ObservePass(double seconds, bool full);
  // A job started after waiting `wait_s`; behind a reservation (backfill) or not.
  void JobStarted(double wait_s, bool backfilled);
  void JobPreempted() { preemptions_->Increment(); }
  void JobSubmitted() { submits_->Increment(); }
  // One synced store write of `writes` records.
  void ObserveCommit(size_t writes) { commit_writes_->Observe(static_cast<double>(writes)); }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* rpc_family_;
  prometheus::Family<prometheus::Histogram>* rpc_latency_family_;
  prometheus::Histogram* pass_full_;
  prometheus::Histogram* pass_quick_;
  prometheus::Histogram* wait_;
  prometheus::Counter* starts_;
  prometheus::Counter* backfills_;
  prometheus::Counter* preemptions_;
  prometheus::Counter* submits_;
  prometheus::Histogram* commit_writes_;
  // Looked up once per (method, code): the families' own lookup hashes every label.
  std::map<std::pair<std::string, Code>, prometheus::Counter*> rpc_counts_;
  std::map<std::string, prometheus::Histogram*> rpc_latency_;
};

}  // namespace snn
