// Points in time as snnctl's users write them (`jobs --since/--until`). Pure.
#pragma once

#include <cstdint>
#include <string>

#include "common/base/status.h"

namespace snn {

// "now"; a duration ago ("90s", "30m", "2h", "1d", "1-12:00:00"); or a local date and time,
// "YYYY-MM-DD", "YYYY-MM-DDTHH:MM" or "YYYY-MM-DDTHH:MM:SS". Returns Unix milliseconds.
Result<int64_t> ParseTimeArg(const std::string& text, int64_t now_ms);

// The first instant of the UTC month holding `ms` (or, with `next`, of the month after).
int64_t MonthStartUtc(int64_t ms, bool next);

// The period --from/--to give (unset: `from` and `to` as given), refused unless from < to.
struct Period {
  int64_t from_ms = 0, to_ms = 0;
};
Result<Period> ParsePeriod(const std::string& from, const std::string& to, int64_t now_ms,
                           Period defaults);

}  // namespace snn
