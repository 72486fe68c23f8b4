// One request datagram and its answer, to a board's management or data port: sent again up to
// `tries` times when no answer comes within `wait_ms` (a board that is off never answers).
#pragma once

#include <string>

#include "common/base/status.h"
#include "common/rpc/address.h"

namespace snn {

Result<std::string> UdpExchange(const HostPort& to, const std::string& request, int wait_ms = 300,
                                int tries = 3);

}  // namespace snn
