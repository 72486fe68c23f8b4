// Accepts TCP connections and hands each to a Connection with the given handlers; with a TLS
// context, only once the TLS handshake is done.
// Thread contract: construct, Listen and Stop on the io_context's thread (or before it runs).
#pragma once

#include <memory>
#include <set>
#include <string>

#include "common/address.h"
#include "common/connection.h"

namespace snn {

class RpcServer {
 public:
  RpcServer(asio::io_context& io, size_t max_frame_bytes, Connection::RequestHandler on_request,
            Connection::CloseHandler on_close, std::shared_ptr<ssl::context> tls = nullptr);

  // Before Listen: accept TLS connections only.
  void set_tls(std::shared_ptr<ssl::context> tls) { tls_ = std::move(tls); }
  // Binds and starts accepting; port 0 picks an ephemeral port (see port()).
  Status Listen(const HostPort& address);
  uint16_t port() const { return port_; }

  // Stops accepting and closes every open connection.
  void Stop();
  size_t connection_count() const { return connections_.size(); }

 private:
  void Accept();
  void Adopt(std::shared_ptr<Connection> conn);

  // Constant after construction.
  asio::io_context& io_;
  const size_t max_frame_bytes_;
  Connection::RequestHandler on_request_;
  Connection::CloseHandler on_close_;
  std::shared_ptr<ssl::context> tls_;

  // Only on the io_context's thread.
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  bool stopped_ = false;
  std::set<std::shared_ptr<Connection>> connections_;
};

}  // namespace snn
