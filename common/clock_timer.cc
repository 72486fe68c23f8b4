#include "common/clock_timer.h"

namespace snn {

struct ClockTimer::Manual {
  uint64_t call = 0;
  std::function<void(bool)> fn;  // empty once run, cancelled or abandoned
};

ClockTimer::ClockTimer(asio::any_io_executor executor, const Clock& clock)
    : executor_(std::move(executor)), manual_(clock.manual()), real_(executor_) {}

ClockTimer::~ClockTimer() {
  if (waiting_) {
    manual_->CancelCall(waiting_->call);
    waiting_->fn = nullptr;
  }
}

void ClockTimer::WaitUs(int64_t delay_us, std::function<void(bool expired)> fn) {
  if (manual_ == nullptr) {
    real_.expires_after(std::chrono::microseconds(delay_us));
    real_.async_wait([fn = std::move(fn)](const boost::system::error_code& ec) { fn(!ec); });
    return;
  }
  Cancel();
  auto wait = std::make_shared<Manual>();
  wait->fn = std::move(fn);
  waiting_ = wait;
  // Fired on the thread that advances the clock: hand the callback to the executor.
  wait->call = manual_->CallAt(manual_->NowUs() + delay_us, [executor = executor_, wait] {
    asio::post(executor, [wait] {
      if (auto fn = std::move(wait->fn)) {
        wait->fn = nullptr;
        fn(true);
      }
    });
  });
}

void ClockTimer::Cancel() {
  if (manual_ == nullptr) {
    real_.cancel();
    return;
  }
  if (!waiting_) return;
  auto wait = std::move(waiting_);
  waiting_ = nullptr;
  manual_->CancelCall(wait->call);
  if (auto fn = std::move(wait->fn)) {
    wait->fn = nullptr;
    asio::post(executor_, [fn = std::move(fn)] { fn(false); });
  }
}

}  // namespace snn
