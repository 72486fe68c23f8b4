// The policy's limits on what one user, or one tenant's jobs together, may have at once
// (v1::UsageLimits: max_submitted, max_time_limit, and a job too big for max_core_hours),
// checked when a job is submitted. Each refusal
// names the limit, where the policy sets it and the count, and nothing is changed. Steps of a
// session are not limited here (the session is).
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "common/base/status.h"
#include "proto/job.pb.h"
#include "proto/policy.pb.h"

namespace snn {

// `user_active` and `tenant_active`: the jobs pending or running now (JobTable).
Status CheckUsageLimits(const v1::JobSpec& spec, const v1::SchedulingConfig& policy,
                        uint64_t user_active, uint64_t tenant_active);

}  // namespace snn
