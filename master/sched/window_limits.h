// The policy's max_core_hours within one scheduling pass (v1::UsageLimits.max_core_hours over
// window_s, SchedulerPolicy.user_core_hours and tenant_core_hours): a job starts only if its
// user's (and tenant's) core-time in the last window, what their running jobs may still use up
// to their time limits, and its own cores x time limit fit the limit. Whatever window is looked
// at later, it then holds no more than the limit: it is at most what the last start before its
// end saw (the ended use in that start's window, the running jobs' time left, and its own).
// Counted from the running jobs the first time a pass asks (never when no limit is set) and as
// the pass starts more. Thread-compatible: one pass's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "master/sched/scheduler_types.h"

namespace snn {

class WindowLimits {
 public:
  WindowLimits(const SchedulerPolicy& policy, const SchedulerInput& in)
      : policy_(policy), in_(in) {}

  // Why `p` may not start for a core-hour limit ("user alice has used or holds 45.0 of 50
  // core-hours in 7d; this job needs 8.0 (policy limits.per_user.max_core_hours)"); null if
  // it may.
  std::shared_ptr<const std::string> Blocks(const PendingJob& p);
  // The pass starts `job`.
  void Started(const SchedJob& job);

  // The core-time a job may take: its cores at its most replicas for its whole time limit.
  static double NeedMs(uint64_t cores_per_replica, uint32_t replicas, uint32_t max_replicas,
                       int64_t time_limit_ms);

 private:
  bool Limited() const {
    return policy_.user_core_hours.core_ms > 0 || !policy_.tenant_core_hours.empty();
  }
  void Count();
  // What `job` (running, or started by this pass) may take within the window ending now.
  double Committed(const SchedJob& job, int64_t window_ms) const;

  const SchedulerPolicy& policy_;
  const SchedulerInput& in_;
  bool counted_ = false;
  // Core-ms used or held in each one's window: ended (the input's), and running.
  std::map<std::string, double, std::less<>> users_, tenants_;
};

}  // namespace snn
