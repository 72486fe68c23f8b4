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

  // The pending jobs of `views` in order, as their slots in views.pending(); leaves each job's
  // priority factors in its entry. `used_core_ms`: core time each tenant used since the last
  // call (charged to the ledger). `pool_cores`: live cores per pool (the size factor's
  // denominator).
  std::vector<uint32_t> Order(SchedulerViews& views,
                              const std::map<std::string, double>& used_core_ms,
                              const std::map<std::string, uint64_t>& pool_cores, int64_t now_ms);

  const FairShareLedger& ledger() const { return ledger_; }

 private:
  void Charge(const std::map<std::string, double>& used_core_ms, int64_t now_ms);

  v1::SchedulingConfig config_;
  PriorityWeights weights_;
  FairShareLedger ledger_;
  struct Key {
    bool starving;
    int64_t wait_ms;
    int32_t tier;
    double total;
    uint64_t id;
    uint32_t slot;
  };
  std::vector<Key> keys_;  // reused pass after pass
};

}  // namespace snn
