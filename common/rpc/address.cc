#include "common/rpc/address.h"

#include <algorithm>
#include <charconv>

#include "common/base/split.h"

namespace snn {

Result<HostPort> ParseHostPort(const std::string& text, bool allow_zero_port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return InvalidArgument("address '" + text + "' is not HOST:PORT");
  }
  HostPort hp;
  hp.host = text.substr(0, colon);
  if (hp.host.size() > 2 && hp.host.front() == '[' && hp.host.back() == ']') {
    hp.host = hp.host.substr(1, hp.host.size() - 2);
  }
  const std::string port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port > 65535 ||
      (port == 0 && !allow_zero_port)) {
    return InvalidArgument("address '" + text + "' has a bad port '" + port_text + "'");
  }
  hp.port = static_cast<uint16_t>(port);
  return hp;
}

Result<std::vector<HostPort>> ParseHostPortList(const std::string& text) {
  std::vector<HostPort> out;
  for (const std::string& item : SplitList(text, ',', /*keep_empty=*/true)) {
    auto one = ParseHostPort(item);
    if (!one.ok()) return one.status();
    out.push_back(*one);
  }
  return out;
}

}  // namespace snn
