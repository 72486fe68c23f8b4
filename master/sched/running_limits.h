// The policy's max_running within one scheduling pass (SchedulerPolicy.user_max_running and
// tenant_max_running): the jobs each user and each tenant runs, counted from the running jobs
// the first time a pass asks (never when no limit is set) and as the pass starts more, and why a
// pending job may not start for them.
// Thread-compatible: one pass's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "master/sched/scheduler_types.h"

namespace snn {

class RunningLimits {
 public:
  RunningLimits(const SchedulerPolicy& policy, std::span<const RunningJob> running)
      : policy_(policy), running_(running) {}

  // Why `p` may not start for a running limit ("user alice runs 2 jobs, the most 2 allowed at
  // once (policy limits.per_user.max_running)"); null if it may.
  std::shared_ptr<const std::string> Blocks(const PendingJob& p);
  // The pass starts `job`.
  void Started(const SchedJob& job);

 private:
  bool Limited() const {
    return policy_.user_max_running > 0 || !policy_.tenant_max_running.empty();
  }
  void Count();

  const SchedulerPolicy& policy_;
  std::span<const RunningJob> running_;
  bool counted_ = false;
  std::map<std::string, uint32_t, std::less<>> users_, tenants_;
};

}  // namespace snn
