// The injectable clock. Nothing else in the project reads time directly: daemons get a
// SystemClock, tests a ManualClock they advance. Both are safe to call from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace snn {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch (wall time: stored in records, shown to users).
  virtual int64_t NowMs() const = 0;
  // Microseconds since the Unix epoch, for rates (token buckets).
  virtual int64_t NowUs() const { return NowMs() * 1000; }
};

class SystemClock : public Clock {
 public:
  int64_t NowMs() const override;
  int64_t NowUs() const override;
};

class ManualClock : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 1'700'000'000'000) : now_us_(start_ms * 1000) {}
  int64_t NowMs() const override { return now_us_.load() / 1000; }
  int64_t NowUs() const override { return now_us_.load(); }
  void AdvanceMs(int64_t ms) { now_us_ += ms * 1000; }
  void AdvanceUs(int64_t us) { now_us_ += us; }
  void SetMs(int64_t ms) { now_us_ = ms * 1000; }

 private:
  std::atomic<int64_t> now_us_;
};

// Monotonic time for measuring elapsed intervals in benchmarks and client timeouts.
std::chrono::steady_clock::time_point MonotonicNow();

}  // namespace snn
