#include "nodeagent/spikes/token_bucket.h"

#include <gtest/gtest.h>

namespace snn {
namespace {

TEST(TokenBucketTest, AdmitsTheRateOverTimeAndNoMore) {
  TokenBucket bucket(100'000, 2'000, 0);  // 100 KSPS, 20 ms of burst
  int64_t now = 0;
  uint64_t admitted = 0;
  // A task injecting 500-spike batches as fast as the bucket allows, for 5 s of fake time.
  while (now < 5'000'000) {
    if (bucket.TryTake(500, now)) {
      admitted += 500;
    } else {
      now += bucket.WaitUs(500, now);
    }
  }
  EXPECT_GE(admitted, 500'000u);
  EXPECT_LE(admitted, 500'000u + 2'000 + 500);
}

TEST(TokenBucketTest, WaitSaysWhenTheBatchFits) {
  TokenBucket bucket(1'000, 100, 0);
  EXPECT_TRUE(bucket.TryTake(100, 0));
  EXPECT_FALSE(bucket.TryTake(50, 0));
  EXPECT_EQ(bucket.WaitUs(50, 0), 50'000);  // 50 tokens at 1000/s
  EXPECT_FALSE(bucket.TryTake(50, 49'999));
  EXPECT_TRUE(bucket.TryTake(50, 50'000));
}

TEST(TokenBucketTest, ABatchLargerThanTheBurstPassesAndLeavesDebt) {
  TokenBucket bucket(1'000, 100, 0);
  EXPECT_TRUE(bucket.TryTake(500, 0));      // whole, never split
  EXPECT_EQ(bucket.WaitUs(1, 0), 401'000);  // the debt of 400, then one token
  EXPECT_FALSE(bucket.TryTake(1, 400'000));
  EXPECT_TRUE(bucket.TryTake(1, 401'000));
}

TEST(TokenBucketTest, ZeroRateAdmitsNothingAndClockStepsBackAddNothing) {
  TokenBucket none(0, 10, 0);
  EXPECT_FALSE(none.TryTake(1, 1'000'000));
  EXPECT_EQ(none.WaitUs(1, 0), -1);
  TokenBucket bucket(1'000, 10, 1'000'000);
  EXPECT_TRUE(bucket.TryTake(10, 1'000'000));
  EXPECT_FALSE(bucket.TryTake(10, 0));  // the clock stepped back: no tokens from it
  EXPECT_TRUE(bucket.TryTake(10, 1'010'000));
}

}  // namespace
}  // namespace snn
