#include "common/base/duration.h"

#include <gtest/gtest.h>

namespace snn {
namespace {

TEST(DurationTest, ParsesSlurmStyleForms) {
  EXPECT_EQ(*ParseDurationSeconds("90s"), 90u);
  EXPECT_EQ(*ParseDurationSeconds("10m"), 600u);
  EXPECT_EQ(*ParseDurationSeconds("2h"), 7200u);
  EXPECT_EQ(*ParseDurationSeconds("1d"), 86400u);
  EXPECT_EQ(*ParseDurationSeconds("30"), 1800u);  // bare minutes, as sbatch --time
  EXPECT_EQ(*ParseDurationSeconds("5:30"), 330u);
  EXPECT_EQ(*ParseDurationSeconds("1:02:03"), 3723u);
  EXPECT_EQ(*ParseDurationSeconds("2-01:00:00"), 2 * 86400u + 3600u);
}

TEST(DurationTest, RejectsNonsense) {
  for (const char* bad :
       {"", "0", "0s", "-5m", "abc", "1:60", "1:2:3:4", "5x", "1.5h", "99999999999999d"}) {
    EXPECT_FALSE(ParseDurationSeconds(bad).ok()) << bad;
  }
}

TEST(DurationTest, Formats) {
  EXPECT_EQ(FormatDurationSeconds(3725), "1:02:05");
  EXPECT_EQ(FormatDurationSeconds(90061), "1-01:01:01");
  EXPECT_EQ(FormatDurationSeconds(0), "0:00:00");
}

TEST(DurationTest, FormatsInTheLargestExactUnitAndReadsBack) {
  EXPECT_EQ(FormatDurationUnit(14 * 3600), "14h");
  EXPECT_EQ(FormatDurationUnit(5400), "90m");
  EXPECT_EQ(FormatDurationUnit(7 * 86400), "7d");
  EXPECT_EQ(FormatDurationUnit(61), "61s");
  EXPECT_EQ(FormatDurationUnit(0), "0s");
  for (uint64_t s : {1ull, 59ull, 60ull, 3600ull, 3601ull, 86400ull, 90061ull}) {
    EXPECT_EQ(*ParseDurationSeconds(FormatDurationUnit(s)), s) << s;
  }
}

}  // namespace
}  // namespace snn
