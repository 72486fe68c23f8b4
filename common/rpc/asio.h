// Include Boost.Asio through this header only: Boost 1.74's Asio misses <utility> under C++20.
#pragma once

// <utility> must come before Asio; Google style would regroup and sort it after.
// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on

namespace snn {
namespace asio = boost::asio;
using tcp = boost::asio::ip::tcp;
}  // namespace snn
