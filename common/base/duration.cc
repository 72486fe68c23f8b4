#include "common/base/duration.h"

#include <charconv>
#include <vector>

namespace snn {
namespace {

bool ParseUnsigned(const std::string& s, uint64_t& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return parts;
}

}  // namespace

Result<uint64_t> ParseDurationSeconds(const std::string& text) {
  const Status bad = InvalidArgument("bad duration '" + text +
                                     "': use 90s, 10m, 2h, 1d, MM:SS, HH:MM:SS or D-HH:MM:SS");
  if (text.empty()) return bad;
  constexpr uint64_t kMax = 100ull * 365 * 86400;
  uint64_t value = 0;
  const char unit = text.back();
  if (unit == 's' || unit == 'm' || unit == 'h' || unit == 'd') {
    if (!ParseUnsigned(text.substr(0, text.size() - 1), value)) return bad;
    const uint64_t scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400;
    if (value > kMax / scale) return bad;
    value *= scale;
  } else {
    uint64_t days = 0;
    std::string rest = text;
    if (const size_t dash = text.find('-'); dash != std::string::npos) {
      if (!ParseUnsigned(text.substr(0, dash), days) || days > 36500) return bad;
      rest = text.substr(dash + 1);
    }
    std::vector<std::string> parts = Split(rest, ':');
    std::vector<uint64_t> nums;
    for (const auto& p : parts) {
      uint64_t n = 0;
      // Bounded before any arithmetic: no field may wrap the sum past the limit.
      if (!ParseUnsigned(p, n) || n > kMax / 60) return bad;
      nums.push_back(n);
    }
    if (parts.size() == 1) {
      value = days > 0 ? days * 86400 + nums[0] * 3600 : nums[0] * 60;
    } else if (parts.size() == 2) {
      if (nums[1] >= 60) return bad;
      value = days > 0 ? days * 86400 + nums[0] * 3600 + nums[1] * 60 : nums[0] * 60 + nums[1];
    } else if (parts.size() == 3) {
      if (nums[1] >= 60 || nums[2] >= 60) return bad;
      value = days * 86400 + nums[0] * 3600 + nums[1] * 60 + nums[2];
    } else {
      return bad;
    }
  }
  if (value == 0) return InvalidArgument("duration '" + text + "' must be greater than zero");
  if (value > kMax) return bad;
  return value;
}

std::string FormatDurationSeconds(uint64_t seconds) {
  const uint64_t d = seconds / 86400, h = (seconds / 3600) % 24, m = (seconds / 60) % 60,
                 s = seconds % 60;
  char buf[64];
  if (d > 0) {
    snprintf(buf, sizeof buf, "%llu-%02llu:%02llu:%02llu", (unsigned long long)d,
             (unsigned long long)h, (unsigned long long)m, (unsigned long long)s);
  } else {
    snprintf(buf, sizeof buf, "%llu:%02llu:%02llu", (unsigned long long)h, (unsigned long long)m,
             (unsigned long long)s);
  }
  return buf;
}

std::string FormatDurationUnit(uint64_t seconds) {
  if (seconds == 0) return "0s";
  if (seconds % 86400 == 0) return std::to_string(seconds / 86400) + "d";
  if (seconds % 3600 == 0) return std::to_string(seconds / 3600) + "h";
  if (seconds % 60 == 0) return std::to_string(seconds / 60) + "m";
  return std::to_string(seconds) + "s";
}

}  // namespace snn
