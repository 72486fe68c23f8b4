// A per-tenant limit on the pending jobs whose waiting time counts, in the manner of Slurm's
// MaxJobsAccruePerUser: a job's wait counts (for the age and slowdown factors and for the
// starvation guard) only from the moment it is one of its tenant's first `per_tenant` pending
// jobs, in submit order. A tenant who queues a thousand jobs at once then accrues no more than
// one who queues a few, and the queue takes tenants in turn rather than whoever submitted most.
// Off (0) by default. Thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace snn {

class AccrualLimit {
 public:
  struct PendingJob {
    uint32_t tenant;  // any dense or interned number: jobs of one tenant share it
    int64_t submit_ms;
    uint64_t id;
  };

  void set_per_tenant(uint32_t per_tenant);
  uint32_t per_tenant() const { return per_tenant_; }
  bool on() const { return per_tenant_ > 0; }

  // Works out which of `pending` (every pending job) accrue as of `now_ms`, and since when: a job
  // that came since the last update accrues from its submit time (it was among its tenant's
  // first since it came: jobs ahead of it only leave); one that was pending then and moves up
  // into them, from `now_ms`. Costs the pending jobs and the names, not n log n.
  void Update(std::span<const PendingJob> pending, int64_t now_ms);

  // The wait that counts for a job as of `now_ms`: since it began to accrue, 0 if it does not.
  // A job that came since the last update counts from its submit time. With the limit off, the
  // whole wait.
  int64_t CountedWait(uint64_t id, int64_t submit_ms, int64_t now_ms) const;

 private:
  uint32_t per_tenant_ = 0;
  int64_t updated_ms_ = INT64_MIN;               // the last Update's time
  std::unordered_map<uint64_t, int64_t> since_;  // accruing job -> accrual start
  std::vector<uint32_t> offsets_;                // by tenant, reused between updates
  std::vector<PendingJob> by_tenant_;            // reused between updates
};

}  // namespace snn
