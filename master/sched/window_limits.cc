#include "master/sched/window_limits.h"

#include <algorithm>
#include <cstdio>

#include "common/base/duration.h"
#include "common/base/job_validation.h"

namespace snn {
namespace {

constexpr double kMsPerHour = 3'600'000.0;

double Find(const std::map<std::string, double, std::less<>>& sums, std::string_view who) {
  auto it = sums.find(who);
  return it == sums.end() ? 0 : it->second;
}

std::string Hours(double core_ms) {
  char text[32];
  snprintf(text, sizeof text, "%.3g", core_ms / kMsPerHour);
  return text;
}

std::shared_ptr<const std::string> Reason(const char* kind, const std::string& who, double used,
                                          double need, const CoreHourLimit& limit,
                                          const std::string& setting) {
  return std::make_shared<const std::string>(
      kind + who + " has used or holds " + Hours(used) + " of " + Hours(limit.core_ms) +
      " core-hours in " + FormatDurationUnit(static_cast<uint64_t>(limit.window_ms / 1000)) +
      "; this job needs " + Hours(need) + " (policy " + setting + ".max_core_hours)");
}

}  // namespace

double WindowLimits::NeedMs(uint64_t cores_per_replica, uint32_t replicas, uint32_t max_replicas,
                            int64_t time_limit_ms) {
  return static_cast<double>(cores_per_replica) * std::max(replicas, max_replicas) *
         static_cast<double>(time_limit_ms);
}

double WindowLimits::Committed(const SchedJob& job, int64_t window_ms) const {
  // Used since the window began, and what it may use until its time limit.
  const int64_t from = std::max(job.start_ms, in_.now_ms - window_ms);
  const int64_t until = std::max(in_.now_ms, job.start_ms + job.time_limit_ms);
  const uint32_t replicas = std::max(1u, job.replicas);
  return NeedMs(job.cores() / replicas, replicas, job.max_replicas, 1) *
         static_cast<double>(std::max<int64_t>(0, until - from));
}

void WindowLimits::Count() {
  if (counted_) return;
  counted_ = true;
  for (const RunningJob& r : in_.running) {
    if (policy_.user_core_hours.core_ms > 0) {
      users_[r.job->user] += Committed(*r.job, policy_.user_core_hours.window_ms);
    }
    auto t = policy_.tenant_core_hours.find(r.job->tenant);
    if (t != policy_.tenant_core_hours.end()) {
      tenants_[r.job->tenant] += Committed(*r.job, t->second.window_ms);
    }
  }
  if (in_.ended == nullptr) return;
  for (const auto& [user, ms] : in_.ended->users) users_[user] += ms;
  for (const auto& [tenant, ms] : in_.ended->tenants) tenants_[tenant] += ms;
}

std::shared_ptr<const std::string> WindowLimits::Blocks(const PendingJob& p) {
  if (!Limited()) return nullptr;
  Count();
  const double need = NeedMs(p.cores, p.replicas, p.job ? p.job->max_replicas : 0, p.time_limit_ms);
  if (const CoreHourLimit& limit = policy_.user_core_hours; limit.core_ms > 0 && p.user) {
    if (const double used = Find(users_, *p.user); used + need > limit.core_ms) {
      return Reason("user ", *p.user, used, need, limit, "limits.per_user");
    }
  }
  auto t = policy_.tenant_core_hours.find(*p.tenant);
  if (t != policy_.tenant_core_hours.end()) {
    if (const double used = Find(tenants_, *p.tenant); used + need > t->second.core_ms) {
      return Reason("tenant ", *p.tenant, used, need, t->second, "tenant " + *p.tenant + " limits");
    }
  }
  return nullptr;
}

void WindowLimits::Started(const SchedJob& job) {
  if (!counted_) return;  // nothing asked yet: the count, when made, will see it running
  const uint32_t replicas = std::max(1u, job.replicas);
  const double need = NeedMs(job.cores() / replicas, replicas, job.max_replicas, job.time_limit_ms);
  if (policy_.user_core_hours.core_ms > 0) users_[job.user] += need;
  if (policy_.tenant_core_hours.count(job.tenant)) tenants_[job.tenant] += need;
}

}  // namespace snn
