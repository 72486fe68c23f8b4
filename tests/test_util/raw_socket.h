// Test helper: talk raw bytes to a server, as a broken or hostile client would.
#pragma once

#include <string>

#include "common/rpc/asio.h"

namespace snn::testing {

// Sends `bytes` to 127.0.0.1:`port`, then reads until the server closes; true if it did.
inline bool ServerClosesAfter(uint16_t port, const std::string& bytes) {
  asio::io_context io;
  tcp::socket s(io);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  // The server may close before everything is written: that is the answer, not an error.
  boost::system::error_code ec;
  asio::write(s, asio::buffer(bytes), ec);
  s.shutdown(tcp::socket::shutdown_send, ec);
  ec = {};
  char buf[256];
  while (!ec) s.read_some(asio::buffer(buf), ec);
  return ec == asio::error::eof || ec == asio::error::connection_reset;
}

}  // namespace snn::testing
