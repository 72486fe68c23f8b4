#include "cli/time_arg.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace snn {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;  // 2027-01-15

TEST(TimeArgTest, DurationsCountBackFromNow) {
  EXPECT_EQ(*ParseTimeArg("now", kNow), kNow);
  EXPECT_EQ(*ParseTimeArg("2h", kNow), kNow - 2 * 3600 * 1000);
  EXPECT_EQ(*ParseTimeArg("7d", kNow), kNow - 7 * 86400 * 1000LL);
  EXPECT_EQ(*ParseTimeArg("1-12:00:00", kNow), kNow - 36 * 3600 * 1000LL);
  EXPECT_EQ(*ParseTimeArg("90s", 10'000), 1) << "not before the epoch";
}

TEST(TimeArgTest, DatesAreLocalTime) {
  setenv("TZ", "UTC", 1);
  tzset();
  EXPECT_EQ(*ParseTimeArg("2026-11-23", kNow), 1'795'392'000'000);
  EXPECT_EQ(*ParseTimeArg("2026-11-23T10:30", kNow), 1'795'392'000'000 + 37'800'000);
  EXPECT_EQ(*ParseTimeArg("2026-11-23T10:30:15", kNow), 1'795'392'000'000 + 37'815'000);
  setenv("TZ", "XYZ-1", 1);  // UTC+1, without the tz database
  tzset();
  EXPECT_EQ(*ParseTimeArg("2026-11-23", kNow), 1'795'392'000'000 - 3'600'000);
  unsetenv("TZ");
  tzset();
}

TEST(TimeArgTest, AnythingElseIsRefusedWithTheFormsThatWork) {
  for (const char* bad : {"", "yesterday", "2026-13-01", "2026-11-23T25:00", "2026-11-23 10:00",
                          "-5h", "2026-11-23Tx"}) {
    auto t = ParseTimeArg(bad, kNow);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.status().message().find("use YYYY-MM-DD"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace snn
