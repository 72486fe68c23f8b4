#include "master/sched/license_counts.h"

#include <algorithm>

namespace snn {

void LicenseCounts::Count() {
  if (counted_) return;
  counted_ = true;
  for (const RunningJob& r : running_) {
    if (r.job->licenses == nullptr) continue;
    for (const auto& [name, count] : *r.job->licenses) used_[name] += count;
  }
}

uint32_t LicenseCounts::Free(const std::string& name) const {
  auto total = policy_.licenses.find(name);
  if (total == policy_.licenses.end()) return 0;
  uint64_t taken = 0;
  if (auto u = used_.find(name); u != used_.end()) taken += u->second;
  if (auto h = held_back_.find(name); h != held_back_.end()) taken += h->second;
  return taken >= total->second ? 0 : static_cast<uint32_t>(total->second - taken);
}

std::shared_ptr<const std::string> LicenseCounts::Blocks(const SchedJob& job) {
  if (job.licenses == nullptr) return nullptr;
  Count();
  std::string missing;
  for (const auto& [name, count] : *job.licenses) {
    const uint32_t free = Free(name);
    if (free >= count) continue;
    auto total = policy_.licenses.find(name);
    missing += (missing.empty() ? "" : ", ") + name + " " + std::to_string(count) + " (" +
               std::to_string(free) + " of " +
               std::to_string(total == policy_.licenses.end() ? 0 : total->second) + " free)";
  }
  if (missing.empty()) return nullptr;
  HoldFor(job);
  return std::make_shared<const std::string>("waiting for licenses: " + missing);
}

void LicenseCounts::Started(const SchedJob& job) {
  if (job.licenses == nullptr) return;
  Count();  // the running jobs', without this one
  for (const auto& [name, count] : *job.licenses) used_[name] += count;
}

void LicenseCounts::HoldFor(const SchedJob& job) {
  if (job.licenses == nullptr) return;
  Count();
  for (const auto& [name, count] : *job.licenses) held_back_[name] += count;
}

}  // namespace snn
