// Site-wide licenses within one scheduling pass (SchedulerPolicy.licenses): what the running
// jobs hold, counted the first time a pass asks (never when no job asks for one), what the pass
// starts, and what is held back for jobs ahead in the order. A job that waits for licenses, or
// holds its pool's reservation, keeps the licenses it needs from every job behind it: licenses
// go in priority order, so a job asking many is never starved by a stream asking few.
// Thread-compatible: one pass's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "master/sched/scheduler_types.h"

namespace snn {

class LicenseCounts {
 public:
  LicenseCounts(const SchedulerPolicy& policy, std::span<const RunningJob> running)
      : policy_(policy), running_(running) {}

  // Why `job` may not start for want of licenses ("waiting for licenses: dvs-camera 1 (0 of 1
  // free)"); null if it may. A job that may not keeps what it asks from those behind it.
  std::shared_ptr<const std::string> Blocks(const SchedJob& job);
  // The pass starts `job`.
  void Started(const SchedJob& job);
  // `job` holds its pool's reservation: what it asks is kept for it.
  void HoldFor(const SchedJob& job);

 private:
  void Count();
  uint32_t Free(const std::string& name) const;  // not held and not held back

  const SchedulerPolicy& policy_;
  std::span<const RunningJob> running_;
  bool counted_ = false;
  std::map<std::string, uint32_t, std::less<>> used_, held_back_;
};

}  // namespace snn
