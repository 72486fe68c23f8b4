// Helpers of the flood tests and load generators: a process's resident memory, sockets from any
// loopback address, and how many of a set of held sockets the server has closed.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/rpc/asio.h"

namespace snn::testing {

// VmRSS of `pid` in kB (-1 if it cannot be read).
inline int64_t RssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

// A socket from loopback address `from` to 127.0.0.1:`port`, or null; with `timeout_s`, sends and
// reads give up after that long.
inline std::unique_ptr<tcp::socket> ConnectFrom(asio::io_context& io, const std::string& from,
                                                uint16_t port, int timeout_s = 0) {
  auto s = std::make_unique<tcp::socket>(io);
  boost::system::error_code ec;
  s->open(tcp::v4(), ec);
  if (!ec) s->bind(tcp::endpoint(asio::ip::make_address(from), 0), ec);
  if (!ec) s->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  if (ec) return nullptr;
  if (timeout_s > 0) {
    timeval timeout{timeout_s, 0};
    setsockopt(s->native_handle(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    setsockopt(s->native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  return s;
}

// Of sockets held open (non-blocking), how many the server has closed.
inline size_t ClosedByServer(const std::vector<std::unique_ptr<tcp::socket>>& held) {
  size_t n = 0;
  for (const auto& s : held) {
    char c;
    boost::system::error_code ec;
    s->read_some(asio::buffer(&c, 1), ec);
    if (ec && ec != asio::error::would_block) ++n;
  }
  return n;
}

}  // namespace snn::testing
