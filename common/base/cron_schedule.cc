#include "common/base/cron_schedule.h"

#include <charconv>
#include <ctime>
#include <vector>

#include "common/base/split.h"

namespace snn {
namespace {

struct Field {
  const char* name;
  int min, max;
};
constexpr Field kFields[] = {{"minute", 0, 59},
                             {"hour", 0, 23},
                             {"day of month", 1, 31},
                             {"month", 1, 12},
                             {"day of week", 0, 7}};

std::optional<int> Number(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// Sets in `bits` what one field names; false if it is not a field.
bool ParseField(std::string_view text, const Field& f, std::vector<bool>& bits, bool* any) {
  *any = text == "*";
  for (const std::string& item : SplitList(text, ',', false)) {
    std::string_view part = item;
    int step = 1;
    if (size_t slash = part.find('/'); slash != std::string_view::npos) {
      auto s = Number(part.substr(slash + 1));
      if (!s || *s < 1 || *s > f.max) return false;
      step = *s;
      part = part.substr(0, slash);
    }
    int first = f.min, last = f.max;
    if (part != "*") {
      const size_t dash = part.find('-');
      auto a = Number(part.substr(0, dash));
      auto b = dash == std::string_view::npos ? a : Number(part.substr(dash + 1));
      if (!a || !b || *a < f.min || *b > f.max || *a > *b) return false;
      first = *a;
      last = dash == std::string_view::npos && step > 1 ? f.max : *b;  // N/S: N, N+S, ...
    }
    for (int v = first; v <= last; v += step) bits[v] = true;
  }
  return true;
}

}  // namespace

Result<CronSchedule> CronSchedule::Parse(std::string_view text) {
  const std::vector<std::string> fields = SplitList(text, ' ', false);
  const std::string shown(text.substr(0, 64));
  if (fields.size() != 5) {
    return InvalidArgument("schedule '" + shown +
                           "' is not five fields (minute hour day-of-month month day-of-week, "
                           "as cron: \"0 3 * * *\" is every day at 03:00 UTC)");
  }
  CronSchedule c;
  bool any[5] = {};
  for (int i = 0; i < 5; ++i) {
    std::vector<bool> bits(kFields[i].max + 1, false);
    if (!ParseField(fields[i], kFields[i], bits, &any[i])) {
      return InvalidArgument("schedule '" + shown + "': its " + kFields[i].name + " field '" +
                             fields[i].substr(0, 32) + "' is not *, N, A-B or either /STEP, from " +
                             std::to_string(kFields[i].min) + " to " +
                             std::to_string(kFields[i].max));
    }
    for (int v = 0; v <= kFields[i].max; ++v) {
      if (!bits[v]) continue;
      switch (i) {
        case 0:
          c.minutes_.set(v);
          break;
        case 1:
          c.hours_.set(v);
          break;
        case 2:
          c.days_.set(v);
          break;
        case 3:
          c.months_.set(v);
          break;
        default:
          c.weekdays_.set(v % 7);
          break;
      }
    }
  }
  c.any_day_ = any[2];
  c.any_weekday_ = any[4];
  if (!c.NextAfter(0)) {
    return InvalidArgument("schedule '" + shown + "' names no day that exists");
  }
  return c;
}

std::optional<int64_t> CronSchedule::NextAfter(int64_t after_ms) const {
  // From the next whole minute, skipping a month, a day or an hour at a time where it cannot
  // match.
  time_t t = static_cast<time_t>(after_ms / 60000 * 60 + 60);
  const time_t stop = t + int64_t{5} * 366 * 86400;
  while (t < stop) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    if (!months_[tm.tm_mon + 1]) {
      tm.tm_mon += 1;
      tm.tm_mday = 1;
      tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
      t = timegm(&tm);
      continue;
    }
    const bool day = days_[tm.tm_mday], weekday = weekdays_[tm.tm_wday];
    // As cron: both restricted, either matches; one restricted, it must.
    const bool day_ok = any_day_ && any_weekday_ ? true
                        : any_day_               ? weekday
                        : any_weekday_           ? day
                                                 : (day || weekday);
    if (!day_ok) {
      tm.tm_mday += 1;
      tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
      t = timegm(&tm);
      continue;
    }
    if (!hours_[tm.tm_hour]) {
      tm.tm_hour += 1;
      tm.tm_min = tm.tm_sec = 0;
      t = timegm(&tm);
      continue;
    }
    if (!minutes_[tm.tm_min]) {
      t += 60;
      continue;
    }
    return int64_t{t} * 1000;
  }
  return std::nullopt;
}

}  // namespace snn
