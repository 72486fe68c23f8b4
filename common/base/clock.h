// The injectable clock. Daemons and tools get a SystemClock, tests a ManualClock they advance.
// Timers and timeouts wait on a Clock through ClockTimer (common/rpc/clock_timer.h), blocking
// waits (retry pauses, polls) through Clock::SleepMs, and loops that pause between rounds until
// told to stop (the HA member's threads) through InterruptibleSleep, so a test that advances a
// ManualClock fires and wakes them all. Nothing else in the product reads or waits on time.
// Stopwatch measures real elapsed time for work that is measured, not scheduled (benchmarks,
// board fingerprints), and RealDeadline bounds what tests and tools wait for real processes.
// All of it is safe to call from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace snn {

class ManualClock;

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch (wall time: stored in records, shown to users).
  virtual int64_t NowMs() const = 0;
  // Microseconds since the Unix epoch, for rates (token buckets).
  virtual int64_t NowUs() const { return NowMs() * 1000; }
  // Milliseconds from an arbitrary origin that never jumps (the wall clock may be set back):
  // for deciding whether an interval has passed, such as a lease's.
  virtual int64_t MonotonicMs() const { return NowMs(); }
  // A manual clock, whose time moves only when a test moves it (timers then wait on it);
  // null for a real clock (timers wait on the system's monotonic time).
  virtual ManualClock* manual() const { return nullptr; }
  // Blocks the calling thread until `ms` have passed on this clock: real time on a SystemClock;
  // on a ManualClock, until another thread has advanced it that far.
  virtual void SleepMs(int64_t ms) const = 0;
  // The same in microseconds, for work paced finer than a millisecond (an experiment's run).
  virtual void SleepUs(int64_t us) const = 0;
};

class SystemClock : public Clock {
 public:
  int64_t NowMs() const override;
  int64_t NowUs() const override;
  int64_t MonotonicMs() const override;
  void SleepMs(int64_t ms) const override;
  void SleepUs(int64_t us) const override;
};

class ManualClock : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 1'700'000'000'000) : now_us_(start_ms * 1000) {}
  int64_t NowMs() const override { return now_us_.load() / 1000; }
  int64_t NowUs() const override { return now_us_.load(); }
  ManualClock* manual() const override { return const_cast<ManualClock*>(this); }
  // Returns once another thread has advanced the clock by `ms` (at once for ms <= 0).
  void SleepMs(int64_t ms) const override { SleepUs(ms * 1000); }
  void SleepUs(int64_t us) const override;

  // Moving time makes every call that came due (CallAt) on the calling thread, in due order.
  void AdvanceMs(int64_t ms) { AdvanceUs(ms * 1000); }
  void AdvanceUs(int64_t us);
  void SetMs(int64_t ms);

  // Calls `fire` once the clock reaches `due_us` (at once, on this thread, if it has). Returns
  // an id for CancelCall. `fire` must be quick and must not call back into this clock.
  uint64_t CallAt(int64_t due_us, std::function<void()> fire);
  // Forgets a call not yet made; false if it was made already (or never existed).
  bool CancelCall(uint64_t id);
  // How many calls wait for time to move (tests wait for a daemon to arm its timer).
  size_t pending_calls() const;

 private:
  void FireDue();

  std::atomic<int64_t> now_us_;
  mutable std::mutex mu_;
  std::multimap<int64_t, std::pair<uint64_t, std::function<void()>>> calls_;  // guarded by mu_
  uint64_t next_call_id_ = 1;                                                 // guarded by mu_
};

// A pause between rounds of a loop that another thread can cut short, on a clock: the loop
// sleeps while Interrupt has not been called, and ends once it has.
class InterruptibleSleep {
 public:
  explicit InterruptibleSleep(const Clock& clock);
  ~InterruptibleSleep();
  InterruptibleSleep(const InterruptibleSleep&) = delete;
  InterruptibleSleep& operator=(const InterruptibleSleep&) = delete;

  // Waits `ms` on the clock; true if they passed, false (at once) once Interrupt was called.
  bool SleepMs(int64_t ms);
  // Wakes every sleeper; every later SleepMs returns false at once.
  void Interrupt();
  bool interrupted() const;

 private:
  struct State;
  const Clock& clock_;
  std::shared_ptr<State> state_;  // shared with the wake-ups a ManualClock holds
};

// Monotonic time for measuring elapsed intervals in benchmarks and client timeouts.
using MonotonicTime = std::chrono::steady_clock::time_point;
MonotonicTime MonotonicNow();

// Real elapsed time, for measuring how long work takes (never for deciding when things happen).
class Stopwatch {
 public:
  Stopwatch() : start_(MonotonicNow()) {}
  double Seconds() const;
  void Restart() { start_ = MonotonicNow(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Blocks the calling thread for real time: only for programs whose job is to wait in real time
// (the shepherd's lease check, load tools); daemons and tests wait on ClockTimer or conditions.
void SleepRealMs(int64_t ms);

// A moment `ms` of real time ahead: how long a test or a tool waits for real processes.
class RealDeadline {
 public:
  explicit RealDeadline(int64_t ms);
  bool passed() const;
  int64_t left_ms() const;  // 0 once passed

 private:
  std::chrono::steady_clock::time_point at_;
};

// Checks `condition` every `poll_ms` of real time until it holds (true) or `timeout_ms` have
// passed (false, after one last check): tests and tools waiting on real processes.
bool PollUntil(const std::function<bool()>& condition, int64_t timeout_ms, int64_t poll_ms = 5);

}  // namespace snn
