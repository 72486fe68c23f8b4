// Recurring jobs' cron schedules: the next run of the usual forms, cron's either-day rule, and
// one line for what is not a schedule or never comes.
#include "common/base/cron_schedule.h"

#include <gtest/gtest.h>

#include <ctime>

namespace snn {
namespace {

// ms since the epoch of a UTC time.
int64_t Utc(int year, int month, int day, int hour, int minute) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  return int64_t{timegm(&tm)} * 1000;
}

int64_t Next(const char* schedule, int64_t after) {
  auto s = CronSchedule::Parse(schedule);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? s->NextAfter(after).value_or(-1) : -1;
}

TEST(CronScheduleTest, TheNextRunOfTheUsualForms) {
  const int64_t now = Utc(2026, 11, 27, 14, 7) + 30'000;  // a Friday, 14:07:30
  EXPECT_EQ(Next("0 3 * * *", now), Utc(2026, 11, 28, 3, 0));
  EXPECT_EQ(Next("*/15 * * * *", now), Utc(2026, 11, 27, 14, 15));
  EXPECT_EQ(Next("7 14 * * *", now), Utc(2026, 11, 28, 14, 7));  // strictly after
  EXPECT_EQ(Next("0 0 * * 1", now), Utc(2026, 11, 30, 0, 0));    // Monday
  EXPECT_EQ(Next("0 0 * * 7", now), Utc(2026, 11, 29, 0, 0));    // 7 is Sunday too
  EXPECT_EQ(Next("30 6 1 */3 *", now), Utc(2027, 1, 1, 6, 30));  // months 1, 4, 7, 10
  EXPECT_EQ(Next("0 12 29 2 *", now), Utc(2028, 2, 29, 12, 0));  // the next leap day
  EXPECT_EQ(Next("5/20 9-10 * * 1-5", now), Utc(2026, 11, 30, 9, 5));
  // Both day fields restricted: a day matching either (the 1st, a Tuesday, before Friday the 4th).
  EXPECT_EQ(Next("0 0 1,15 * 5", now), Utc(2026, 12, 1, 0, 0));
}

TEST(CronScheduleTest, WhatIsNotAScheduleIsRefusedWithOneLine) {
  EXPECT_EQ(CronSchedule::Parse("0 3 * *").status().message(),
            "schedule '0 3 * *' is not five fields (minute hour day-of-month month day-of-week, "
            "as cron: \"0 3 * * *\" is every day at 03:00 UTC)");
  EXPECT_EQ(CronSchedule::Parse("61 * * * *").status().message(),
            "schedule '61 * * * *': its minute field '61' is not *, N, A-B or either /STEP, "
            "from 0 to 59");
  EXPECT_FALSE(CronSchedule::Parse("* * * * 8").ok());
  EXPECT_FALSE(CronSchedule::Parse("*/0 * * * *").ok());
  EXPECT_FALSE(CronSchedule::Parse("5-2 * * * *").ok());
  EXPECT_FALSE(CronSchedule::Parse("@daily").ok());
  EXPECT_EQ(CronSchedule::Parse("0 0 30 2 *").status().message(),
            "schedule '0 0 30 2 *' names no day that exists");
}

}  // namespace
}  // namespace snn
