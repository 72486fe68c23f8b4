#include "master/sched/running_limits.h"

namespace snn {
namespace {

uint32_t CountOf(const std::map<std::string, uint32_t, std::less<>>& counts,
                 const std::string& who) {
  auto it = counts.find(who);
  return it == counts.end() ? 0 : it->second;
}

std::shared_ptr<const std::string> Reason(const char* kind, const std::string& who,
                                          uint32_t running, uint32_t limit,
                                          const std::string& setting) {
  return std::make_shared<const std::string>(kind + who + " runs " + std::to_string(running) +
                                             (running == 1 ? " job" : " jobs") + ", the most " +
                                             std::to_string(limit) + " allowed at once (policy " +
                                             setting + ".max_running)");
}

}  // namespace

void RunningLimits::Count() {
  if (counted_) return;
  counted_ = true;
  for (const RunningJob& r : running_) {
    ++users_[r.job->user];
    ++tenants_[r.job->tenant];
  }
}

std::shared_ptr<const std::string> RunningLimits::Blocks(const PendingJob& p) {
  if (!Limited()) return nullptr;
  Count();
  if (const uint32_t limit = policy_.user_max_running; limit > 0 && p.user != nullptr) {
    if (const uint32_t n = CountOf(users_, *p.user); n >= limit) {
      return Reason("user ", *p.user, n, limit, "limits.per_user");
    }
  }
  auto t = policy_.tenant_max_running.find(*p.tenant);
  if (t != policy_.tenant_max_running.end()) {
    if (const uint32_t n = CountOf(tenants_, *p.tenant); n >= t->second) {
      return Reason("tenant ", *p.tenant, n, t->second, "tenant " + *p.tenant + " limits");
    }
  }
  return nullptr;
}

void RunningLimits::Started(const SchedJob& job) {
  if (!counted_) return;  // nothing asked yet: the count, when made, will see it running
  ++users_[job.user];
  ++tenants_[job.tenant];
}

}  // namespace snn
