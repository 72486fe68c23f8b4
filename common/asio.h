// Include Boost.Asio through this header only: Boost 1.74's Asio misses <utility> under C++20.
#pragma once

#include <utility>

#include <boost/asio.hpp>

namespace snn {
namespace asio = boost::asio;
using tcp = boost::asio::ip::tcp;
}  // namespace snn
