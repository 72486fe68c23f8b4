#include "master/metrics/master_metrics.h"

#include <cctype>

namespace snn {
namespace {

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries b = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  return b;
}

std::string CodeLabel(Code code) {
  std::string name = CodeName(code);
  for (char& c : name) c = c == ' ' ? '_' : static_cast<char>(std::tolower(c));
  return name;
}

}  // namespace

MasterMetrics::MasterMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  rpc_family_ = &prometheus::BuildCounter()
                     .Name("snn_rpc_requests_total")
                     .Help("Requests answered, by method and status code")
                     .Register(*registry_);
  rpc_latency_family_ = &prometheus::BuildHistogram()
                             .Name("snn_rpc_duration_seconds")
                             .Help(
                                 "Time from a request's dispatch to its answer (durable "
                                 "writes included), by method")
                             .Register(*registry_);
  auto& pass = prometheus::BuildHistogram()
                   .Name("snn_scheduling_pass_duration_seconds")
                   .Help(
                       "Scheduling pass duration, by kind (full: every pending job; quick: "
                       "the head of the queue)")
                   .Register(*registry_);
  pass_full_ = &pass.Add({{"kind", "full"}}, LatencyBuckets());
  pass_quick_ = &pass.Add({{"kind", "quick"}}, LatencyBuckets());
  wait_ =
      &prometheus::BuildHistogram()
           .Name("snn_job_wait_seconds")
           .Help("Time pending jobs waited before they started")
           .Register(*registry_)
           .Add({}, prometheus::Histogram::BucketBoundaries{1, 10, 60, 300, 900, 1800, 3600,
                                                            4 * 3600, 12 * 3600, 86400, 7 * 86400});
  auto& starts = prometheus::BuildCounter()
                     .Name("snn_job_starts_total")
                     .Help("Job starts, by how (backfill: behind another job's reservation)")
                     .Register(*registry_);
  starts_ = &starts.Add({{"how", "in_order"}});
  backfills_ = &starts.Add({{"how", "backfill"}});
  preemptions_ = &prometheus::BuildCounter()
                      .Name("snn_job_preemptions_total")
                      .Help("Running jobs stopped for another job")
                      .Register(*registry_)
                      .Add({});
  submits_ = &prometheus::BuildCounter()
                  .Name("snn_job_submits_total")
                  .Help("Jobs accepted")
                  .Register(*registry_)
                  .Add({});
  commit_writes_ =
      &prometheus::BuildHistogram()
           .Name("snn_store_commit_records")
           .Help("Records per state-store batch (one event's writes)")
           .Register(*registry_)
           .Add({}, prometheus::Histogram::BucketBoundaries{1, 2, 4, 8, 16, 64, 256, 1024, 4096});
}

void MasterMetrics::ObserveRpc(const std::string& method, Code code, double seconds) {
  auto key = std::make_pair(method, code);
  auto it = rpc_counts_.find(key);
  if (it == rpc_counts_.end()) {
    it =
        rpc_counts_.emplace(key, &rpc_family_->Add({{"method", method}, {"code", CodeLabel(code)}}))
            .first;
  }
  it->second->Increment();
  auto lt = rpc_latency_.find(method);
  if (lt == rpc_latency_.end()) {
    lt = rpc_latency_
             .emplace(method, &rpc_latency_family_->Add({{"method", method}}, LatencyBuckets()))
             .first;
  }
  lt->second->Observe(seconds);
}

void MasterMetrics::ObservePass(double seconds, bool full) {
  (full ? pass_full_ : pass_quick_)->Observe(seconds);
}

void MasterMetrics::JobStarted(double wait_s, bool backfilled) {
  (backfilled ? backfills_ : starts_)->Increment();
  wait_->Observe(wait_s);
}

}  // namespace snn
