#include "master/sched/accrual.h"

#include <algorithm>

namespace snn {

void AccrualLimit::set_per_tenant(uint32_t per_tenant) {
  if (per_tenant != per_tenant_) {
    since_.clear();
    updated_ms_ = INT64_MIN;
  }
  per_tenant_ = per_tenant;
}

void AccrualLimit::Update(std::span<const PendingJob> pending, int64_t now_ms) {
  if (!on()) {
    since_.clear();
    updated_ms_ = INT64_MIN;
    return;
  }
  // The jobs by tenant (a counting sort: tenants are dense numbers), then each tenant's first
  // per_tenant_ by (submit, id), unordered.
  uint32_t tenants = 0;
  for (const PendingJob& j : pending) tenants = std::max(tenants, j.tenant + 1);
  offsets_.assign(tenants + 1, 0);
  for (const PendingJob& j : pending) ++offsets_[j.tenant + 1];
  for (uint32_t t = 0; t < tenants; ++t) offsets_[t + 1] += offsets_[t];
  by_tenant_.resize(pending.size());
  {
    std::vector<uint32_t> next(offsets_.begin(), offsets_.end() - 1);
    for (const PendingJob& j : pending) by_tenant_[next[j.tenant]++] = j;
  }
  const auto earlier = [](const PendingJob& a, const PendingJob& b) {
    return a.submit_ms != b.submit_ms ? a.submit_ms < b.submit_ms : a.id < b.id;
  };
  std::unordered_map<uint64_t, int64_t> since;
  for (uint32_t t = 0; t < tenants; ++t) {
    const auto begin = by_tenant_.begin() + offsets_[t], end = by_tenant_.begin() + offsets_[t + 1];
    auto first_end = end;
    if (static_cast<size_t>(end - begin) > per_tenant_) {
      first_end = begin + per_tenant_;
      std::nth_element(begin, first_end, end, earlier);
    }
    for (auto j = begin; j != first_end; ++j) {
      int64_t start;
      if (auto known = since_.find(j->id); known != since_.end()) {
        start = known->second;
      } else if (j->submit_ms > updated_ms_) {
        start = j->submit_ms;  // came since the last update
      } else {
        start = std::max(j->submit_ms, now_ms);  // moved up
      }
      since.emplace(j->id, start);
    }
  }
  since_ = std::move(since);
  updated_ms_ = now_ms;
}

int64_t AccrualLimit::CountedWait(uint64_t id, int64_t submit_ms, int64_t now_ms) const {
  int64_t start = submit_ms;
  if (on()) {
    if (auto it = since_.find(id); it != since_.end()) {
      start = it->second;
    } else if (submit_ms <= updated_ms_) {
      return 0;  // pending at the last update, and not among its tenant's first
    }
  }
  return std::max<int64_t>(0, now_ms - start);
}

}  // namespace snn
