#include "master/pass_cadence.h"

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

}  // namespace
}  // namespace snn
