// Include Boost.Asio through this header only: Boost 1.74's Asio misses <utility> under C++20.
#pragma once

#include <boost/asio.hpp>
#include <utility>

namespace snn {
namespace asio = boost::asio;
using tcp = boost::asio::ip::tcp;
}  // namespace snn
