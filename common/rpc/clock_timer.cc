#include "common/rpc/clock_timer.h"

namespace snn {

struct ClockTimer::Manual {
  uint64_t call = 0;
  std::function<void(bool)> fn;  // empty once run, cancelled or abandoned
  // Keeps the io_context running while the wait is on, as a pending steady_timer does.
  asio::any_io_executor work;

  // The callback, once: whoever takes it first (expiry, cancel) runs it. The work is released
  // by the caller once the callback is posted (releasing the last work stops the io_context).
  std::function<void(bool)> Take() {
    auto taken = std::move(fn);
    fn = nullptr;
    return taken;
  }
};

ClockTimer::ClockTimer(asio::any_io_executor executor, const Clock& clock)
    : executor_(std::move(executor)), manual_(clock.manual()), real_(executor_) {}

ClockTimer::~ClockTimer() {
  if (waiting_) {
    manual_->CancelCall(waiting_->call);
    waiting_->Take();
    waiting_->work = asio::any_io_executor();
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
  wait->work = asio::prefer(executor_, asio::execution::outstanding_work.tracked);
  waiting_ = wait;
  // Fired on the thread that advances the clock: hand the callback to the executor.
  wait->call = manual_->CallAt(manual_->NowUs() + delay_us, [executor = executor_, wait] {
    asio::post(executor, [wait] {
      wait->work = asio::any_io_executor();  // this handler is work enough now
      if (auto fn = wait->Take()) fn(true);
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
  if (auto fn = wait->Take()) {
    asio::post(executor_, [fn = std::move(fn)] { fn(false); });
  }
  wait->work = asio::any_io_executor();
}

}  // namespace snn
