// A token bucket for one task's spike budget: `rate` spikes a second, up to `burst` saved up.
// A batch is admitted whole once the bucket holds min(batch, burst) tokens; a batch larger than
// the burst leaves the bucket in debt, which later batches wait out. Over any window the
// admitted spikes stay within rate x window + burst + one batch, and nothing is split or
// reordered. Time is passed in (microseconds), so the bucket is pure.
// Thread contract: not thread-safe; its owner serializes calls.
#pragma once

#include <cstdint>

namespace snn {

class TokenBucket {
 public:
  // rate_per_s 0: nothing is ever admitted.
  TokenBucket(uint64_t rate_per_s, uint64_t burst, int64_t now_us);

  // Takes `n` tokens and returns true if the batch may pass now.
  bool TryTake(uint64_t n, int64_t now_us);

  // Microseconds until a batch of `n` could pass (0: now); -1 if never (rate 0).
  int64_t WaitUs(uint64_t n, int64_t now_us);

  uint64_t rate_per_s() const { return rate_; }
  uint64_t burst() const { return burst_; }

 private:
  void Refill(int64_t now_us);

  const uint64_t rate_;
  const uint64_t burst_;
  double tokens_;  // may be negative (debt)
  int64_t last_us_;
};

}  // namespace snn
