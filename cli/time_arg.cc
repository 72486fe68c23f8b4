#include "cli/time_arg.h"

#include <ctime>

#include "common/duration.h"

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

}  // namespace snn
