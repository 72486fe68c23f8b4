#include "master/sched/core_time.h"

namespace snn {

void CoreTimeAccrual::Advance(Tenant& t, int64_t to_ms) {
  if (t.since_ms == INT64_MIN) {
    t.since_ms = to_ms;
    return;
  }
  if (to_ms <= t.since_ms) return;
  t.core_ms += static_cast<double>(t.cores) * static_cast<double>(to_ms - t.since_ms);
  t.since_ms = to_ms;
}

void CoreTimeAccrual::Start(const std::string& tenant, uint64_t cores, int64_t from_ms) {
  Tenant& t = tenants_[tenant];
  if (t.since_ms != INT64_MIN && from_ms < t.since_ms) {
    t.core_ms += static_cast<double>(cores) * static_cast<double>(t.since_ms - from_ms);
  } else {
    Advance(t, from_ms);
  }
  t.cores += cores;
}

void CoreTimeAccrual::Stop(const std::string& tenant, uint64_t cores, int64_t at_ms) {
  Tenant& t = tenants_[tenant];
  Advance(t, at_ms);
  t.cores -= cores < t.cores ? cores : t.cores;
}

std::map<std::string, double> CoreTimeAccrual::Take(int64_t now_ms) {
  std::map<std::string, double> out;
  for (auto it = tenants_.begin(); it != tenants_.end();) {
    Tenant& t = it->second;
    Advance(t, now_ms);
    if (t.core_ms > 0) out.emplace(it->first, t.core_ms);
    t.core_ms = 0;
    if (t.cores == 0) {
      it = tenants_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

uint64_t CoreTimeAccrual::cores(const std::string& tenant) const {
  auto it = tenants_.find(tenant);
  return it == tenants_.end() ? 0 : it->second.cores;
}

}  // namespace snn
