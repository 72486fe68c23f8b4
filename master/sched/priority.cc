#include "master/sched/priority.h"

#include <algorithm>
#include <cmath>

namespace snn {

void FairShareLedger::AdvanceTo(int64_t now_ms) {
  if (last_ms_ != INT64_MIN && now_ms > last_ms_ && half_life_ms_ > 0) {
    scale_ *=
        std::exp2(-static_cast<double>(now_ms - last_ms_) / static_cast<double>(half_life_ms_));
    if (scale_ < 1e-100) {  // before new charges lose their precision: fold it in
      stored_total_ = 0;
      for (auto& [tenant, u] : stored_) {
        u *= scale_;
        stored_total_ += u;
      }
      scale_ = 1;
    }
  }
  if (last_ms_ == INT64_MIN || now_ms > last_ms_) last_ms_ = now_ms;
}

double FairShareLedger::usage(const std::string& tenant) const {
  auto it = stored_.find(tenant);
  return it == stored_.end() ? 0 : it->second * scale_;
}

std::map<std::string, double> FairShareLedger::all() const {
  std::map<std::string, double> usage;
  for (const auto& [tenant, u] : stored_) usage.emplace(tenant, u * scale_);
  return usage;
}

PriorityFactors ComputePriority(const PriorityInputs& in, const PriorityWeights& w) {
  PriorityFactors f;
  f.age = w.max_age_ms > 0 ? std::min(1.0, static_cast<double>(std::max<int64_t>(0, in.wait_ms)) /
                                               static_cast<double>(w.max_age_ms))
                           : 0;
  const double share = std::max(1e-9, in.tenant_weight_share);
  f.fairshare = std::exp2(-in.tenant_usage_share / share);
  const double size = std::min(1.0, static_cast<double>(in.cores) /
                                        static_cast<double>(std::max<uint64_t>(1, in.pool_cores)));
  f.size = w.favor_small ? 1.0 - size : size;
  f.queue =
      in.max_queue_priority > 0
          ? std::clamp(static_cast<double>(in.queue_priority) / in.max_queue_priority, 0.0, 1.0)
          : 0;
  f.job = (std::clamp(in.job_priority, -1000, 1000) + 1000) / 2000.0;
  if (in.time_limit_ms > 0) {  // without an estimate, no expected slowdown
    const double limit = std::max<double>(10e3, static_cast<double>(in.time_limit_ms));
    f.slowdown = 1.0 - limit / (static_cast<double>(std::max<int64_t>(0, in.wait_ms)) + limit);
  }
  f.total = w.slowdown * f.slowdown + w.age * f.age + w.fairshare * f.fairshare + w.size * f.size +
            w.queue * f.queue + w.job * f.job;
  return f;
}

}  // namespace snn
