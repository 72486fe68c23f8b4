// Parses "host:port" addresses given on command lines and in flag files. Pure, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/base/status.h"

namespace snn {

struct HostPort {
  std::string host;
  uint16_t port = 0;
  std::string ToString() const { return host + ":" + std::to_string(port); }
};

// Accepts "host:port" and "[v6addr]:port"; port 0 is allowed (ephemeral) only if allow_zero.
Result<HostPort> ParseHostPort(const std::string& text, bool allow_zero_port = false);
// "a:1,b:2": the masters of an HA group (one address is a list of one).
Result<std::vector<HostPort>> ParseHostPortList(const std::string& text);

}  // namespace snn
