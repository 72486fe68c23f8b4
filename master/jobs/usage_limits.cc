#include "master/jobs/usage_limits.h"

#include <algorithm>
#include <cstdio>

#include "common/base/array_spec.h"
#include "common/base/duration.h"
#include "common/base/job_validation.h"

namespace snn {
namespace {

Status Check(const v1::UsageLimits& limits, const std::string& who, const std::string& where,
             const v1::JobSpec& spec, uint64_t active) {
  if (limits.max_time_limit_s() > 0 && spec.time_limit_s() > limits.max_time_limit_s()) {
    return InvalidArgument("time_limit " + FormatDurationUnit(spec.time_limit_s()) +
                           " is longer than " + who + " may ask for, " +
                           FormatDurationUnit(limits.max_time_limit_s()) + " (policy " + where +
                           ".max_time_limit)");
  }
  if (limits.max_core_hours() > 0) {
    // At its most replicas, for its whole time limit: what a window may have to hold for it.
    const uint64_t cores = CoreRequestOf(spec.task().resources()).cores() *
                           std::max({1u, spec.min_replicas(), spec.max_replicas()});
    const double hours = static_cast<double>(cores) * spec.time_limit_s() / 3600.0;
    if (hours > limits.max_core_hours()) {
      char text[160];
      snprintf(text, sizeof text, "this job may use %.3g core-hours (%llu %s for %s), more than ",
               hours, static_cast<unsigned long long>(cores), cores == 1 ? "core" : "cores",
               FormatDurationUnit(spec.time_limit_s()).c_str());
      char limit[64];
      snprintf(limit, sizeof limit, "%.3g", limits.max_core_hours());
      return InvalidArgument(text + who + " may use in " + FormatDurationUnit(limits.window_s()) +
                             ", " + limit + " (policy " + where +
                             ".max_core_hours): ask for fewer cores or a shorter time_limit");
    }
  }
  // An array counts as its elements.
  const uint64_t adds = spec.has_array() ? CountOf(spec.array().ranges()) : 1;
  if (limits.max_submitted() > 0 && active + adds > limits.max_submitted()) {
    return Status(Code::kResourceExhausted,
                  who + " has " + std::to_string(active) + " jobs pending or running, the most " +
                      std::to_string(limits.max_submitted()) + " allowed (policy " + where +
                      ".max_submitted)" +
                      (adds > 1 ? "; this array adds " + std::to_string(adds) : std::string()) +
                      ": submit again when some have ended");
  }
  return Status::Ok();
}

}  // namespace

Status CheckUsageLimits(const v1::JobSpec& spec, const v1::SchedulingConfig& policy,
                        uint64_t user_active, uint64_t tenant_active) {
  if (spec.kind() == v1::STEP) return Status::Ok();
  SNN_RETURN_IF_ERROR(
      Check(policy.user_limits(), "user " + spec.user(), "limits.per_user", spec, user_active));
  for (const v1::TenantConfig& t : policy.tenants()) {
    if (t.name() != spec.tenant()) continue;
    return Check(t.limits(), "tenant " + t.name(), "tenant " + t.name() + " limits", spec,
                 tenant_active);
  }
  return Status::Ok();
}

}  // namespace snn
