// Parses and prints durations the way Slurm users write them. Pure, thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "common/base/status.h"

namespace snn {

// Accepts "90s", "10m", "2h", "1d", a bare number of minutes ("30", as Slurm's --time),
// "MM:SS", "HH:MM:SS" and "D-HH:MM:SS". Returns seconds; zero and negatives are errors.
Result<uint64_t> ParseDurationSeconds(const std::string& text);

// 3725 -> "1:02:05", 90061 -> "1-01:01:01".
std::string FormatDurationSeconds(uint64_t seconds);

// As files write durations, in the largest unit that is exact: 50400 -> "14h", 5400 -> "90m",
// 604800 -> "7d", 61 -> "61s", 0 -> "0s". ParseDurationSeconds reads it back.
std::string FormatDurationUnit(uint64_t seconds);

}  // namespace snn
