// Recurring jobs' `schedule:` (cron syntax, as crontab(5) and Slurm's scrontab): five fields,
// minute (0-59), hour (0-23), day of month (1-31), month (1-12) and day of week (0-7, 0 and 7
// Sunday), each `*`, N, A-B, or either with /STEP, comma-separated. As cron, when both day
// fields are restricted a day matching either runs. Times are UTC. Pure; thread-safe.
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/base/status.h"

namespace snn {

class CronSchedule {
 public:
  // One line naming the field at fault when `text` is not a schedule, or never comes (0 0 30 2 *).
  static Result<CronSchedule> Parse(std::string_view text);

  // The first minute strictly after `after_ms` (ms since the epoch) the schedule names; none
  // within five years.
  std::optional<int64_t> NextAfter(int64_t after_ms) const;

 private:
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;     // 1-31
  std::bitset<13> months_;   // 1-12
  std::bitset<7> weekdays_;  // 0 Sunday
  bool any_day_ = false, any_weekday_ = false;
};

}  // namespace snn
