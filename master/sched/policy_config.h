// The scheduling policy's configuration (proto/policy.proto): the defaults, validation that
// names the problem, admin changes to one queue or tenant, and the translation into what the
// scheduler core and the priority code take. The policy file is read by master/policy_file.h.
// Pure; thread-safe.
#pragma once

#include <set>
#include <string>

#include "common/base/status.h"
#include "master/sched/priority.h"
#include "master/sched/scheduler_types.h"
#include "proto/policy.pb.h"

namespace snn {

// EASY with shortest-first backfill (jobs waiting past 14 h first), preemption after a 5-minute
// grace, weights age 1000, fair share 1000, queue 1000, job 1000, slowdown 1000, size 0; full
// age after 4 days; fair-share half-life 7 days; starvation guard 5 hours; one queue, "default".
v1::SchedulingConfig DefaultSchedulingConfig();

// The policy's max_lost_requeues, or its default when the stored policy predates it.
uint32_t MaxLostRequeues(const v1::SchedulingConfig& c);

// At most this many kinds of license in the policy.
inline constexpr size_t kMaxLicenses = 256;

// Names, weights, switches, and every capacity: guaranteed never above the limit.
Status ValidatePolicy(const v1::SchedulingConfig& config);

// An admin's change to one queue or tenant: merged into `current` (pool caps by pool; a
// change that names no pools keeps them), checked, and returned. `create` allows a new name;
// otherwise the name must exist. Every pool named must be in `known_pools`.
Result<v1::SchedulingConfig> SetQueue(const v1::SchedulingConfig& current,
                                      const v1::QueueConfig& change, bool create,
                                      const std::set<std::string>& known_pools);
Result<v1::SchedulingConfig> SetTenant(const v1::SchedulingConfig& current,
                                       const v1::TenantConfig& change, bool create,
                                       const std::set<std::string>& known_pools);

SchedulerPolicy ToSchedulerPolicy(const v1::SchedulingConfig& config);
PriorityWeights ToWeights(const v1::SchedulingConfig& config);
const v1::QueueConfig* FindQueue(const v1::SchedulingConfig& config, const std::string& name);
const v1::TenantConfig* FindTenant(const v1::SchedulingConfig& config, const std::string& name);

}  // namespace snn
