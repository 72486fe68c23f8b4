#include "common/base/utc_time.h"

#include <cstdio>
#include <ctime>

#include "common/base/duration.h"

namespace snn {

namespace {

std::string Format(int64_t ms, const char* format) {
  const time_t t = static_cast<time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  strftime(buf, sizeof buf, format, &tm);
  return buf;
}

}  // namespace

std::string FormatUtcTime(int64_t ms) { return Format(ms, "%Y-%m-%d %H:%M:%S UTC"); }

std::string FormatIsoUtcTime(int64_t ms) { return Format(ms, "%Y-%m-%dT%H:%M:%SZ"); }

Result<int64_t> ParseUtcTime(const std::string& text, int64_t now_ms) {
  if (text == "now") return now_ms;
  if (text.rfind("now+", 0) == 0) {
    auto d = ParseDurationSeconds(text.substr(4));
    if (!d.ok()) return InvalidArgument("time '" + text + "': " + d.status().message());
    return now_ms + static_cast<int64_t>(*d) * 1000;
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, used = 0;
  char sep = 0;
  const int n = std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d%n:%2d%n", &y, &mo, &d, &sep, &h,
                            &mi, &used, &s, &used);
  const bool shape =
      (n == 6 || n == 7) && (sep == 'T' || sep == ' ') && static_cast<size_t>(used) == text.size();
  if (!shape || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59 || y < 1970 ||
      h < 0 || mi < 0 || s < 0) {
    return InvalidArgument("time '" + text +
                           "' is not 'now', 'now+DURATION' or YYYY-MM-DDTHH:MM[:SS] (UTC)");
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  const time_t t = timegm(&tm);
  std::tm back{};
  gmtime_r(&t, &back);
  if (back.tm_mday != d) return InvalidArgument("time '" + text + "': no such day");
  return static_cast<int64_t>(t) * 1000;
}

}  // namespace snn
