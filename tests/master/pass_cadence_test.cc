#include "master/jobs/pass_cadence.h"

#include <gtest/gtest.h>

namespace snn {
namespace {

TEST(PassCadenceTest, PassesTakeAtMostTheirShareOfTheIoThread) {
  PassCadence cadence(PassCadenceOptions{0.25, 0});
  EXPECT_EQ(cadence.WaitUs(0), 0);  // the first pass runs at once
  cadence.PassRan(/*end_us=*/1'100'000, /*took_us=*/100'000);
  // 100 ms of pass, then 300 ms for everything else: a quarter of the thread.
  EXPECT_EQ(cadence.WaitUs(1'100'000), 300'000);
  EXPECT_EQ(cadence.WaitUs(1'300'000), 100'000);
  EXPECT_EQ(cadence.WaitUs(1'400'000), 0);
  EXPECT_EQ(cadence.WaitUs(9'000'000), 0);
}

TEST(PassCadenceTest, CheapPassesFollowTheirEventsAlmostAtOnce) {
  PassCadence cadence(PassCadenceOptions{0.25, 0});
  cadence.PassRan(1'000, 20);
  EXPECT_EQ(cadence.WaitUs(1'000), 60);
  EXPECT_EQ(cadence.WaitUs(1'060), 0);
}

TEST(PassCadenceTest, AMinimumGapHoldsEvenForCheapPasses) {
  PassCadence cadence(PassCadenceOptions{0.5, 5'000});
  cadence.PassRan(10'000, 10);
  EXPECT_EQ(cadence.WaitUs(10'000), 5'000);
  cadence.PassRan(20'000, 8'000);  // a long pass: its own rest is longer than the gap
  EXPECT_EQ(cadence.WaitUs(20'000), 8'000);
}

TEST(PassCadenceTest, OutOfRangeSharesAreClamped) {
  PassCadence all(PassCadenceOptions{5.0, 0});  // at most the whole thread: no rest
  all.PassRan(1'000, 500);
  EXPECT_EQ(all.WaitUs(1'000), 0);
  PassCadence none(PassCadenceOptions{0.0, 0});  // at least 1%: never starved for ever
  none.PassRan(0, 10);
  EXPECT_EQ(none.WaitUs(0), 990);
}

TEST(PassCadenceTest, ADeepQueueGetsQuickPassesAndAFullOneEveryInterval) {
  PassCadenceOptions options;
  options.quick_depth = 100;
  options.full_interval_us = 1'000'000;
  PassCadence cadence(options);
  EXPECT_EQ(cadence.DepthAt(0, 5'000), 0u);  // no full pass yet: this one is
  cadence.PassRan(50'000, 50'000, /*full=*/true);
  EXPECT_EQ(cadence.DepthAt(60'000, 5'000), 100u);
  EXPECT_EQ(cadence.DepthAt(60'000, 100), 0u);  // a short queue: every pass is full
  EXPECT_EQ(cadence.FullDueInUs(60'000), 990'000);
  cadence.PassRan(61'000, 100, /*full=*/false);  // quick passes do not put it off
  EXPECT_EQ(cadence.FullDueInUs(61'000), 989'000);
  EXPECT_EQ(cadence.DepthAt(1'049'999, 5'000), 100u);
  EXPECT_EQ(cadence.DepthAt(1'050'000, 5'000), 0u);
  PassCadence never_quick(PassCadenceOptions{0.25, 0, 0, 1'000'000});
  never_quick.PassRan(10, 10, true);
  EXPECT_EQ(never_quick.DepthAt(20, 1'000'000), 0u);
}

}  // namespace
}  // namespace snn
