#include "common/base/clock.h"

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <thread>
#include <vector>

namespace snn {

int64_t SystemClock::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t SystemClock::NowUs() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t SystemClock::MonotonicMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void SystemClock::SleepMs(int64_t ms) const {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

void SystemClock::SleepUs(int64_t us) const {
  if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
}

void ManualClock::SleepUs(int64_t us) const {
  if (us <= 0) return;
  struct Wake {
    std::mutex mu;
    std::condition_variable cv;
    bool due = false;
  };
  auto wake = std::make_shared<Wake>();
  const_cast<ManualClock*>(this)->CallAt(NowUs() + us, [wake] {
    std::lock_guard<std::mutex> lock(wake->mu);
    wake->due = true;
    wake->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(wake->mu);
  wake->cv.wait(lock, [&] { return wake->due; });
}

void ManualClock::AdvanceUs(int64_t us) {
  now_us_ += us;
  FireDue();
}

void ManualClock::SetMs(int64_t ms) {
  now_us_ = ms * 1000;
  FireDue();
}

uint64_t ManualClock::CallAt(int64_t due_us, std::function<void()> fire) {
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_call_id_++;
    calls_.emplace(due_us, std::make_pair(id, std::move(fire)));
  }
  FireDue();
  return id;
}

bool ManualClock::CancelCall(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = calls_.begin(); it != calls_.end(); ++it) {
    if (it->second.first == id) {
      calls_.erase(it);
      return true;
    }
  }
  return false;
}

size_t ManualClock::pending_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_.size();
}

void ManualClock::FireDue() {
  std::vector<std::function<void()>> due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t now = now_us_.load();
    while (!calls_.empty() && calls_.begin()->first <= now) {
      due.push_back(std::move(calls_.begin()->second.second));
      calls_.erase(calls_.begin());
    }
  }
  for (auto& fire : due) fire();
}

struct InterruptibleSleep::State {
  std::mutex mu;
  std::condition_variable cv;
  bool interrupted = false;  // guarded by mu
};

InterruptibleSleep::InterruptibleSleep(const Clock& clock)
    : clock_(clock), state_(std::make_shared<State>()) {}

InterruptibleSleep::~InterruptibleSleep() { Interrupt(); }

bool InterruptibleSleep::SleepMs(int64_t ms) {
  ManualClock* manual = clock_.manual();
  if (manual == nullptr) {
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->cv.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(ms, 0)),
                        [&] { return state_->interrupted; });
    return !state_->interrupted;
  }
  if (ms <= 0) return !interrupted();
  // The wake-up may fire on this thread (time already moved past it): it is armed unlocked.
  auto due = std::make_shared<bool>(false);  // guarded by state_->mu
  std::shared_ptr<State> state = state_;
  const uint64_t id = manual->CallAt(manual->NowUs() + ms * 1000, [state, due] {
    std::lock_guard<std::mutex> lock(state->mu);
    *due = true;
    state->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [&] { return *due || state_->interrupted; });
  const bool passed = !state_->interrupted;
  lock.unlock();
  manual->CancelCall(id);
  return passed;
}

void InterruptibleSleep::Interrupt() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->interrupted = true;
  }
  state_->cv.notify_all();
}

bool InterruptibleSleep::interrupted() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->interrupted;
}

std::chrono::steady_clock::time_point MonotonicNow() { return std::chrono::steady_clock::now(); }

double Stopwatch::Seconds() const {
  return std::chrono::duration<double>(MonotonicNow() - start_).count();
}

void SleepRealMs(int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

RealDeadline::RealDeadline(int64_t ms) : at_(MonotonicNow() + std::chrono::milliseconds(ms)) {}

bool RealDeadline::passed() const { return MonotonicNow() >= at_; }

int64_t RealDeadline::left_ms() const {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - MonotonicNow());
  return std::max<int64_t>(0, left.count());
}

bool PollUntil(const std::function<bool()>& condition, int64_t timeout_ms, int64_t poll_ms) {
  const RealDeadline deadline(timeout_ms);
  while (!deadline.passed()) {
    if (condition()) return true;
    SleepRealMs(poll_ms);
  }
  return condition();
}

}  // namespace snn
