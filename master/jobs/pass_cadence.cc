#include "master/jobs/pass_cadence.h"

#include <algorithm>
#include <cstdint>

namespace snn {

PassCadence::PassCadence(PassCadenceOptions options) : options_(options) {
  options_.max_busy = std::clamp(options_.max_busy, 0.01, 1.0);
  options_.min_gap_us = std::max<int64_t>(0, options_.min_gap_us);
}

void PassCadence::PassRan(int64_t end_us, int64_t took_us, bool full) {
  if (full) last_full_us_ = end_us;
  const double rest = static_cast<double>(std::max<int64_t>(0, took_us)) *
                      (1.0 - options_.max_busy) / options_.max_busy;
  next_allowed_us_ = end_us + std::max(options_.min_gap_us, static_cast<int64_t>(rest));
}

int64_t PassCadence::WaitUs(int64_t now_us) const {
  return std::max<int64_t>(0, next_allowed_us_ - now_us);
}

}  // namespace snn

namespace snn {

int64_t PassCadence::FullDueInUs(int64_t now_us) const {
  if (last_full_us_ == INT64_MIN) return 0;
  return std::max<int64_t>(0, last_full_us_ + options_.full_interval_us - now_us);
}

size_t PassCadence::DepthAt(int64_t now_us, size_t pending) const {
  if (options_.quick_depth == 0 || pending <= options_.quick_depth) return 0;
  return FullDueInUs(now_us) == 0 ? 0 : options_.quick_depth;
}

}  // namespace snn
