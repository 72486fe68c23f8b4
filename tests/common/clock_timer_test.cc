// Timers on the injected clock: on a ManualClock they fire when the test advances time (on the
// io thread), never before; a cancelled or replaced wait says so; a destroyed timer never calls.
#include "common/rpc/clock_timer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace snn {
namespace {

TEST(ClockTimerTest, FiresWhenTheManualClockPassesItsExpiryAndNotBefore) {
  ManualClock clock;
  asio::io_context io;
  ClockTimer timer(io, clock);
  std::vector<bool> calls;
  timer.WaitMs(100, [&](bool expired) { calls.push_back(expired); });
  io.poll();
  clock.AdvanceMs(99);
  io.poll();
  EXPECT_TRUE(calls.empty());
  clock.AdvanceMs(1);
  EXPECT_TRUE(calls.empty()) << "runs on the io thread, not on the thread moving time";
  io.poll();
  EXPECT_EQ(calls, std::vector<bool>{true});
  clock.AdvanceMs(1000);
  io.poll();
  EXPECT_EQ(calls.size(), 1u) << "one shot";
}

TEST(ClockTimerTest, ACancelledOrReplacedWaitIsToldSo) {
  ManualClock clock;
  asio::io_context io;
  ClockTimer timer(io, clock);
  std::vector<std::pair<int, bool>> calls;
  timer.WaitMs(10, [&](bool expired) { calls.emplace_back(1, expired); });
  timer.WaitMs(20, [&](bool expired) { calls.emplace_back(2, expired); });
  clock.AdvanceMs(10);
  io.poll();
  EXPECT_EQ(calls, (std::vector<std::pair<int, bool>>{{1, false}}));
  timer.Cancel();
  clock.AdvanceMs(100);
  io.poll();
  EXPECT_EQ(calls, (std::vector<std::pair<int, bool>>{{1, false}, {2, false}}));
  EXPECT_EQ(clock.pending_calls(), 0u);
}

TEST(ClockTimerTest, ADestroyedTimerNeverCalls) {
  ManualClock clock;
  asio::io_context io;
  int calls = 0;
  {
    ClockTimer timer(io, clock);
    timer.WaitMs(5, [&](bool) { ++calls; });
  }
  clock.AdvanceMs(10);
  io.poll();
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(clock.pending_calls(), 0u);
}

TEST(ClockTimerTest, OnASystemClockItWaitsRealTime) {
  SystemClock clock;
  asio::io_context io;
  ClockTimer timer(io, clock);
  bool expired = false;
  timer.WaitMs(1, [&](bool e) { expired = e; });
  io.run();  // returns once the timer has fired
  EXPECT_TRUE(expired);
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

// A sleep on a manual clock ends when another thread moves the clock past it, not before.
TEST(ClockSleepTest, ASleepOnAManualClockEndsOnceTheClockIsAdvancedPastIt) {
  ManualClock clock;
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    clock.SleepMs(100);
    woke = true;
  });
  // Wait for the sleeper to arm its wake-up, then move the clock short of it and past it.
  while (clock.pending_calls() == 0) std::this_thread::yield();
  clock.AdvanceMs(99);
  EXPECT_FALSE(woke.load());
  EXPECT_EQ(clock.pending_calls(), 1u);
  clock.AdvanceMs(1);
  sleeper.join();
  EXPECT_TRUE(woke.load());
  clock.SleepMs(0);  // nothing to wait for: returns at once
}

// An interruptible sleep ends when its time has passed (true) or when it is interrupted (false),
// on a manual clock as on the system clock; after Interrupt every sleep ends at once.
TEST(InterruptibleSleepTest, EndsWhenTimePassesOrWhenInterrupted) {
  ManualClock clock;
  InterruptibleSleep pause(clock);
  std::atomic<int> outcome{-1};
  std::thread timed([&] { outcome = pause.SleepMs(100) ? 1 : 0; });
  while (clock.pending_calls() == 0) std::this_thread::yield();
  clock.AdvanceMs(100);
  timed.join();
  EXPECT_EQ(outcome.load(), 1);

  std::thread cut_short([&] { outcome = pause.SleepMs(100) ? 1 : 0; });
  while (clock.pending_calls() == 0) std::this_thread::yield();
  pause.Interrupt();
  cut_short.join();
  EXPECT_EQ(outcome.load(), 0);
  EXPECT_EQ(clock.pending_calls(), 0u) << "an interrupted sleep left its wake-up armed";
  EXPECT_FALSE(pause.SleepMs(100));
  EXPECT_TRUE(pause.interrupted());

  SystemClock real;
  InterruptibleSleep real_pause(real);
  std::thread stopper([&] { real_pause.Interrupt(); });
  EXPECT_FALSE(real_pause.SleepMs(3600 * 1000));  // an hour, cut short by the other thread
  stopper.join();
}

}  // namespace
}  // namespace snn
