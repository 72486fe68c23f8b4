#include "nodeagent/spikes/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace snn {

TokenBucket::TokenBucket(uint64_t rate_per_s, uint64_t burst, int64_t now_us)
    : rate_(rate_per_s),
      burst_(std::max<uint64_t>(burst, 1)),
      tokens_(static_cast<double>(burst_)),
      last_us_(now_us) {}

void TokenBucket::Refill(int64_t now_us) {
  if (now_us <= last_us_) return;  // time that stands still or steps back adds nothing
  tokens_ =
      std::min(static_cast<double>(burst_),
               tokens_ + static_cast<double>(rate_) * static_cast<double>(now_us - last_us_) / 1e6);
  last_us_ = now_us;
}

bool TokenBucket::TryTake(uint64_t n, int64_t now_us) {
  if (rate_ == 0) return false;
  Refill(now_us);
  if (tokens_ < static_cast<double>(std::min(n, burst_))) return false;
  tokens_ -= static_cast<double>(n);
  return true;
}

int64_t TokenBucket::WaitUs(uint64_t n, int64_t now_us) {
  if (rate_ == 0) return -1;
  Refill(now_us);
  const double missing = static_cast<double>(std::min(n, burst_)) - tokens_;
  if (missing <= 0) return 0;
  return static_cast<int64_t>(std::ceil(missing * 1e6 / static_cast<double>(rate_)));
}

}  // namespace snn
