// A one-shot timer on an Asio executor that waits on an injected Clock: on a real clock an
// asio::steady_timer; on a ManualClock, until the test advances the clock past its expiry.
// Either way the callback runs on the executor's thread: fn(true) once the time has passed,
// fn(false) if Cancel (or a new Wait) comes first. A timer destroyed while waiting never calls.
// Thread contract: Wait and Cancel on the executor's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "common/base/clock.h"
#include "common/rpc/asio.h"

namespace snn {

class ClockTimer {
 public:
  ClockTimer(asio::any_io_executor executor, const Clock& clock);
  ClockTimer(asio::io_context& io, const Clock& clock) : ClockTimer(io.get_executor(), clock) {}
  ~ClockTimer();
  ClockTimer(const ClockTimer&) = delete;
  ClockTimer& operator=(const ClockTimer&) = delete;

  void WaitUs(int64_t delay_us, std::function<void(bool expired)> fn);
  void WaitMs(int64_t delay_ms, std::function<void(bool expired)> fn) {
    WaitUs(delay_ms * 1000, std::move(fn));
  }
  void Cancel();

 private:
  struct Manual;  // the wait in progress on a ManualClock

  const asio::any_io_executor executor_;
  ManualClock* const manual_;
  asio::steady_timer real_;          // used with a real clock
  std::shared_ptr<Manual> waiting_;  // used with a manual clock
};

}  // namespace snn
