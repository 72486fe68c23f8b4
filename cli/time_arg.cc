#include "cli/time_arg.h"

#include <ctime>

#include "common/base/duration.h"

namespace snn {

Result<int64_t> ParseTimeArg(const std::string& text, int64_t now_ms) {
  if (text == "now") return now_ms;
  if (text.size() >= 10 && text[4] == '-' && text[7] == '-') {
    std::tm tm{};
    const char* end = nullptr;
    for (const char* format : {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d"}) {
      tm = std::tm{};
      end = strptime(text.c_str(), format, &tm);
      if (end != nullptr && *end == '\0') break;
      end = nullptr;
    }
    if (end == nullptr || tm.tm_year < 70 || tm.tm_year > 1100) {
      return InvalidArgument("bad time '" + text +
                             "': use YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS], now, or a time ago "
                             "such as 2h or 7d");
    }
    tm.tm_isdst = -1;
    const std::time_t t = std::mktime(&tm);
    if (t == -1) return InvalidArgument("bad time '" + text + "': not a time on this host");
    return static_cast<int64_t>(t) * 1000;
  }
  auto ago = ParseDurationSeconds(text);
  if (!ago.ok()) {
    return InvalidArgument("bad time '" + text +
                           "': use YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS], now, or a time ago such "
                           "as 2h or 7d");
  }
  const int64_t ago_ms = static_cast<int64_t>(*ago) * 1000;
  return ago_ms >= now_ms ? 1 : now_ms - ago_ms;
}

int64_t MonthStartUtc(int64_t ms, bool next) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  tm.tm_mday = 1;
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  if (next) ++tm.tm_mon;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

Result<Period> ParsePeriod(const std::string& from, const std::string& to, int64_t now_ms,
                           Period defaults) {
  Period p = defaults;
  if (!from.empty()) {
    auto t = ParseTimeArg(from, now_ms);
    if (!t.ok()) return t.status();
    p.from_ms = *t;
  }
  if (!to.empty()) {
    auto t = ParseTimeArg(to, now_ms);
    if (!t.ok()) return t.status();
    p.to_ms = *t;
  }
  if (p.to_ms <= p.from_ms) {
    return InvalidArgument("the period is empty: --to (" + std::to_string(p.to_ms / 1000) +
                           ") must be after --from (" + std::to_string(p.from_ms / 1000) + ")");
  }
  return p;
}

}  // namespace snn
