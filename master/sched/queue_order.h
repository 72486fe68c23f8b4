// The order of the pending jobs for a scheduling pass: the multifactor priority of each (left
// in the job's scheduler view, where `snnctl jobs --priority` reads it), from the fair-share
// ledger, which this charges with the core time the job table accrued for running jobs. Starving
// jobs first (oldest first), then by queue tier, then by priority, then by id. Thread contract: the
// master's io thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "master/sched/priority.h"
#include "master/sched/scheduler_views.h"
#include "proto/policy.pb.h"

namespace snn {

class QueueOrder {
 public:
  void Configure(const v1::SchedulingConfig& config);

  // `pool_cores`: live cores per pool (the size factor's denominator).
  // The pending jobs' index entries (record and scheduler view), in order.
  // `used_core_ms`: core time each tenant used since the last call (charged to the ledger).
  std::vector<const PendingKey*> Order(const std::map<std::string, PendingQueue>& pending,
                                       const std::map<std::string, double>& used_core_ms,
                                       const std::map<std::string, uint64_t>& pool_cores,
                                       int64_t now_ms);

  const FairShareLedger& ledger() const { return ledger_; }

 private:
  void Charge(const std::map<std::string, double>& used_core_ms, int64_t now_ms);

  v1::SchedulingConfig config_;
  PriorityWeights weights_;
  FairShareLedger ledger_;
};

}  // namespace snn
