// Run-time predictions (Tsafrir, Etsion & Feitelson, "Backfilling using system-generated
// predictions rather than user runtime estimates", IEEE TPDS 2007): a job is predicted to run
// as long as the mean of its user's last two finished jobs, never longer than its own time
// limit; with no history, its limit. The start forecast (start_forecast.h) carries the plan
// forward with them; the scheduler's decisions still use time limits, and the limit stays what
// a job is killed at. A running job that outlives its prediction is predicted to run to its
// limit from then on. Pure; a plain value.
#pragma once

#include <algorithm>
#include <cstdint>

namespace snn {

class RuntimeHistory {
 public:
  // A finished job of this user ran `run_ms`.
  void Record(int64_t run_ms) {
    prev_ms_ = last_ms_;
    last_ms_ = std::max<int64_t>(0, run_ms);
  }
  // The predicted run time of a job with this limit (limit_ms > 0), at least 1 s.
  int64_t Predict(int64_t limit_ms) const {
    if (last_ms_ < 0) return limit_ms;
    const int64_t mean = prev_ms_ < 0 ? last_ms_ : (last_ms_ + prev_ms_) / 2;
    return std::min(limit_ms, std::max<int64_t>(mean, 1000));
  }
  bool known() const { return last_ms_ >= 0; }

 private:
  int64_t last_ms_ = -1, prev_ms_ = -1;
};

// When a running job is expected to end: its predicted end, or, once it outlived that, the
// end of its time limit.
inline int64_t PredictedEnd(int64_t start_ms, int64_t predicted_ms, int64_t limit_ms,
                            int64_t now_ms) {
  const int64_t predicted_end = start_ms + predicted_ms;
  return predicted_end > now_ms ? predicted_end : start_ms + limit_ms;
}

}  // namespace snn
