#include "master/sched/accrual.h"

#include <algorithm>

namespace snn {

void AccrualLimit::set_per_tenant(uint32_t per_tenant) {
  if (per_tenant != per_tenant_) since_.clear();
  per_tenant_ = per_tenant;
}

void AccrualLimit::Update(std::span<const PendingJob> pending, int64_t now_ms) {
  if (!on()) {
    since_.clear();
    return;
  }
  sorted_.assign(pending.begin(), pending.end());
  std::sort(sorted_.begin(), sorted_.end(), [](const PendingJob& a, const PendingJob& b) {
    if (a.tenant != b.tenant) return a.tenant < b.tenant;
    if (a.submit_ms != b.submit_ms) return a.submit_ms < b.submit_ms;
    return a.id < b.id;
  });
  std::unordered_map<uint64_t, int64_t> since;
  since.reserve(sorted_.size());
  uint32_t rank = 0;
  for (size_t i = 0; i < sorted_.size(); ++i) {
    const PendingJob& j = sorted_[i];
    rank = i > 0 && sorted_[i - 1].tenant == j.tenant ? rank + 1 : 0;
    auto known = since_.find(j.id);
    int64_t start = kNotAccruing;
    if (rank < per_tenant_) {
      if (known == since_.end()) {
        start = j.submit_ms;
      } else {
        start = known->second != kNotAccruing ? known->second : std::max(j.submit_ms, now_ms);
      }
    }
    since.emplace(j.id, start);
  }
  since_ = std::move(since);
}

int64_t AccrualLimit::CountedWait(uint64_t id, int64_t submit_ms, int64_t now_ms) const {
  int64_t start = submit_ms;
  if (on()) {
    if (auto it = since_.find(id); it != since_.end()) start = it->second;
  }
  return start == kNotAccruing ? 0 : std::max<int64_t>(0, now_ms - start);
}

}  // namespace snn
