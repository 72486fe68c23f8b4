#include "master/jobs/submitted_counts.h"

#include <algorithm>

#include "common/base/array_spec.h"

namespace snn {

uint64_t SubmittedCounts::Lookup(const Counts& counts, const std::string& key) {
  auto it = counts.find(key);
  return it == counts.end() ? 0 : it->second;
}

uint64_t SubmittedCounts::Weight(const v1::JobRecord& array) {
  return CountOf(array.array_left()) + CountOf(array.array_held());
}

void SubmittedCounts::Count(const v1::JobRecord& job, int sign) {
  if (job.spec().kind() == v1::STEP) return;
  if (job.state() != v1::PENDING && job.state() != v1::RUNNING) return;
  uint64_t weight = 1;
  if (job.spec().has_array()) {
    if (sign > 0) {
      weight = array_weight_[job.id()] = Weight(job);
    } else {
      auto it = array_weight_.find(job.id());
      weight = it == array_weight_.end() ? 0 : it->second;
      if (it != array_weight_.end()) array_weight_.erase(it);
    }
  }
  Add(job, sign > 0 ? static_cast<int64_t>(weight) : -static_cast<int64_t>(weight));
}

void SubmittedCounts::ArrayChanged(const v1::JobRecord& array) {
  auto it = array_weight_.find(array.id());
  if (it == array_weight_.end()) return;
  const uint64_t now = Weight(array);
  Add(array, static_cast<int64_t>(now) - static_cast<int64_t>(it->second));
  it->second = now;
}

void SubmittedCounts::Add(const v1::JobRecord& job, int64_t delta) {
  if (delta == 0) return;
  auto add = [delta](Counts& counts, const std::string& key) {
    uint64_t& n = counts[key];
    n = delta > 0 ? n + static_cast<uint64_t>(delta)
                  : n - std::min(n, static_cast<uint64_t>(-delta));
    if (n == 0) counts.erase(key);
  };
  add(users_, job.spec().user());
  add(tenants_, job.tenant());
}

}  // namespace snn
