// Multifactor job priority in the manner of Slurm, and the fair-share ledger it draws on.
//
// priority = w_age x age + w_fairshare x fairshare + w_size x size + w_queue x queue + w_job x job
//            + w_slowdown x slowdown
// with every factor in [0, 1]:
//   age        time waiting / max_age (capped at 1)
//   fairshare  2^(-usage share / weight share): a tenant that used exactly its share gets 0.5,
//              one that used nothing 1; usage decays with a half-life
//   size       the job's cores / the pool's cores, or 1 minus that when favoring small jobs
//   queue      the queue's priority / the highest queue priority
//   job        the job's own priority, -1000..1000, mapped onto 0..1
//   slowdown   the slowdown the job would see if it started now, s = (wait + run) / run, its run
//              time as its user's last two jobs predict (runtime_prediction.h: at most its
//              limit; with no history, its limit; at least 10 s, as bounded slowdown is
//              measured), as 1 - 1/s: 0 on arrival, 0.5 once it has waited as long as it is
//              expected to run. Short jobs climb
//              fast (highest response ratio next), long ones slowly; the starvation guard
//              bounds how long they wait. 0 for a job without a time limit.
// Pure; the ledger is a plain value. Thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace snn {

struct PriorityWeights {
  double age = 1000;
  double fairshare = 1000;
  double size = 0;
  double queue = 1000;
  double job = 1000;
  double slowdown = 0;
  int64_t max_age_ms = 7LL * 86400 * 1000;
  bool favor_small = false;
  // A job waiting longer than this goes ahead of every job that has not, oldest first, whatever
  // the factors say: fair share and size may reorder the queue, not starve a job. 0: off.
  int64_t starve_after_ms = 0;
};

struct PriorityFactors {
  double age = 0, fairshare = 0, size = 0, queue = 0, job = 0, slowdown = 0;
  double total = 0;
  bool starving = false;  // waited past the starvation guard (set by the queue order)
};

// Decayed past usage (core-milliseconds) per tenant. Decay costs the same however many tenants
// there are: each usage is kept as a stored value times one scale for all, so decaying scales
// that one number and charging divides by it (everything is rescaled once the scale gets tiny).
class FairShareLedger {
 public:
  explicit FairShareLedger(int64_t half_life_ms = 7LL * 86400 * 1000)
      : half_life_ms_(half_life_ms) {}

  // Decays every tenant's usage to `now_ms` (time never runs backwards here).
  void AdvanceTo(int64_t now_ms);
  // A tenant's account, to charge many times without looking it up; valid as long as this
  // ledger.
  using Account = double*;
  Account AccountOf(const std::string& tenant) { return &stored_[tenant]; }
  void Charge(Account account, double core_ms) {
    const double stored = core_ms / scale_;
    *account += stored;
    stored_total_ += stored;
  }
  void Charge(const std::string& tenant, double core_ms) { Charge(AccountOf(tenant), core_ms); }

  double usage(const std::string& tenant) const;
  double total() const { return stored_total_ * scale_; }
  int64_t half_life_ms() const { return half_life_ms_; }
  size_t tenants() const { return stored_.size(); }
  // Every tenant's usage now.
  std::map<std::string, double> all() const;

 private:
  int64_t half_life_ms_;
  int64_t last_ms_ = INT64_MIN;
  std::map<std::string, double> stored_;  // usage / scale_
  double scale_ = 1;
  double stored_total_ = 0;
};

struct PriorityInputs {
  int64_t wait_ms = 0;
  uint64_t cores = 0, pool_cores = 1;
  double tenant_usage_share = 0;   // the tenant's usage / everyone's (0..1)
  double tenant_weight_share = 1;  // the tenant's weight / every tenant's (0..1]
  int32_t queue_priority = 0, max_queue_priority = 0;
  int32_t job_priority = 0;
  int64_t time_limit_ms = 0;
};

PriorityFactors ComputePriority(const PriorityInputs& in, const PriorityWeights& w);

// The order of two pending jobs: true if (wait_a, priority_a, id_a) goes before b. Inline: the
// simulator sorts with it at every event.
inline bool GoesFirst(int64_t wait_a, double priority_a, uint64_t id_a, int64_t wait_b,
                      double priority_b, uint64_t id_b, const PriorityWeights& w) {
  if (w.starve_after_ms > 0) {
    const bool starving_a = wait_a > w.starve_after_ms, starving_b = wait_b > w.starve_after_ms;
    if (starving_a != starving_b) return starving_a;
    if (starving_a) return wait_a != wait_b ? wait_a > wait_b : id_a < id_b;
  }
  if (priority_a != priority_b) return priority_a > priority_b;
  return id_a < id_b;
}

}  // namespace snn
