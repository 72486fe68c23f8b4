// Points in time as operators write and read them, in UTC (as cron schedules are). Pure,
// thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "common/base/status.h"

namespace snn {

// 1795838400000 -> "2026-11-28 03:00:00 UTC".
std::string FormatUtcTime(int64_t ms);
// 1795838400000 -> "2026-11-28T03:00:00Z" (ISO 8601: sorts as text in time order).
std::string FormatIsoUtcTime(int64_t ms);

// Accepts "now", "now+DURATION" (as ParseDurationSeconds reads it: "now+2h", "now+90s") and
// "YYYY-MM-DDTHH:MM[:SS]" (also with a space for the T), in UTC. Returns epoch milliseconds.
Result<int64_t> ParseUtcTime(const std::string& text, int64_t now_ms);

}  // namespace snn
