// The order of the pending jobs for a scheduling pass: the multifactor priority of each (left
// in the job's scheduler view, where `snnctl jobs --priority` reads it), from the fair-share
// ledger, which this charges with the core time the job table accrued for running jobs. Starving
// jobs first (oldest first), then by queue tier, then by priority, then by id.
// A full order (Order) works out every pending job's priority afresh. Between two of them, a
// quick pass needs only the head of the queue (OrderHead): the order the last full one found,
// with the jobs that became pending since (or changed) merged in by their priority as of that
// order's time, costs what changed, not the queue's depth. Thread contract: the master's io
// thread.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "master/sched/accrual.h"
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

  // The first `depth` pending jobs in order, as their slots, as the last Order ranked them with
  // the jobs that became pending or changed since merged in (and their factors left in their
  // entries). Empty when no Order ran since the last Configure. Costs the jobs that changed
  // since the last Order and `depth`, not the number pending.
  std::vector<uint32_t> OrderHead(SchedulerViews& views, size_t depth);
  // Whether OrderHead has a full order to start from.
  bool has_order() const { return ranked_valid_; }

  const FairShareLedger& ledger() const { return ledger_; }

 private:
  struct Key {
    bool starving;
    int64_t wait_ms;
    int32_t tier;
    double total;
    uint64_t id;
  };
  struct KeyLess {
    bool operator()(const Key& a, const Key& b) const;
  };
  // Per tenant and queue (by interned name), worked out once per full order.
  struct TenantTerms {
    double usage_share = 0, weight_share = 1;
  };
  struct QueueTerms {
    int32_t tier = 0, factor = 0;
  };
  void Charge(const std::map<std::string, double>& used_core_ms, int64_t now_ms);
  void PrepareTerms(const SchedulerViews& views, const std::map<std::string, uint64_t>& pool_cores);
  // Works out `e`'s priority as of `now_ms` (left in e.factors) and its place in the order.
  Key KeyOf(PendingEntry& e, int64_t now_ms);

  v1::SchedulingConfig config_;
  bool has_tree_ = false;  // some tenant has a parent: fair share down the tree
  PriorityWeights weights_;
  FairShareLedger ledger_;
  AccrualLimit accrual_;
  // The last full order's terms, and when it ran.
  std::vector<TenantTerms> tenant_terms_;
  std::vector<QueueTerms> queue_terms_;
  TenantTerms new_tenant_terms_;  // for a tenant it did not see
  std::map<std::string, uint64_t> pool_cores_;
  const std::string* last_pool_ = nullptr;  // KeyOf's last lookup in pool_cores_
  uint64_t cores_in_pool_ = 1;
  int64_t ranked_ms_ = 0;
  // The last full order, and the jobs that became pending or changed since, ranked apart.
  std::vector<Key> ranked_;
  bool ranked_valid_ = false;
  size_t ranked_head_ = 0;  // ranked_ before it has left the queue
  std::unordered_map<uint64_t, Key> changed_;
  std::set<Key, KeyLess> changed_order_;
};

}  // namespace snn
