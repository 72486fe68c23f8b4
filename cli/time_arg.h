// Points in time as snnctl's users write them (`jobs --since/--until`). Pure.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace snn {

// "now"; a duration ago ("90s", "30m", "2h", "1d", "1-12:00:00"); or a local date and time,
// "YYYY-MM-DD", "YYYY-MM-DDTHH:MM" or "YYYY-MM-DDTHH:MM:SS". Returns Unix milliseconds.
Result<int64_t> ParseTimeArg(const std::string& text, int64_t now_ms);

}  // namespace snn
