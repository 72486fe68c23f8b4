// Accepts TCP connections and hands each to a Connection with the given handlers; with a TLS
// context, only once the TLS handshake is done. Bounded against floods: connections in all, those
// of one address that have not proven who they are, and those of one user or node at one address
// are capped (see common/rpc/peer_slots.h: a flood from a shared address evicts its own oldest
// anonymous connections rather than lock out the address's other users); a handshake, proving
// who one is, a frame and an idle connection each have a time limit (with a clock: set_limits);
// accept errors (out of file descriptors) back off instead of spinning; log lines are
// rate-limited.
// Thread contract: construct, Listen and Stop on the io_context's thread (or before it runs).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "common/base/clock.h"
#include "common/rpc/address.h"
#include "common/rpc/clock_timer.h"
#include "common/rpc/connection.h"
#include "common/rpc/peer_slots.h"

namespace snn {

struct ServerLimits {
  size_t max_connections = 4096;       // open and handshaking, in all
  size_t max_per_owner = 256;          // proven as one user or node, from one IP address
  size_t max_anonymous_per_peer = 64;  // not (yet) proven, from one IP address; more: oldest goes
  size_t always_admit = 4;             // a peer with fewer open gets in past max_connections
  int64_t handshake_timeout_ms = 10000;
  int64_t anonymous_timeout_ms = 60000;  // accepted this long ago and still not proven: closed
  int64_t frame_timeout_ms = 30000;      // a frame's body must arrive within this
  int64_t idle_timeout_ms = 600000;      // no byte read or written for this long: closed
  int64_t accept_backoff_ms = 100;       // after a failed accept (EMFILE)
  int64_t sweep_ms = 1000;               // how often the limits are checked
};

class RpcServer {
 public:
  RpcServer(asio::io_context& io, size_t max_frame_bytes, Connection::RequestHandler on_request,
            Connection::CloseHandler on_close, std::shared_ptr<ssl::context> tls = nullptr);
  ~RpcServer();

  // Before Listen: accept TLS connections only.
  void set_tls(std::shared_ptr<ssl::context> tls) { tls_ = std::move(tls); }
  // Before Listen: the limits, checked on `clock` (without: caps only, no time limits).
  void set_limits(const ServerLimits& limits, const Clock* clock);
  // Binds and starts accepting; port 0 picks an ephemeral port (see port()).
  Status Listen(const HostPort& address);
  uint16_t port() const { return port_; }

  // Stops accepting and closes every open connection.
  void Stop();
  size_t connection_count() const { return connections_.size(); }

 private:
  struct Handshake {
    std::shared_ptr<std::unique_ptr<TlsStream>> stream;
    std::string peer;
    int64_t started_ms = 0;
  };
  void Accept();
  void OnAccepted(tcp::socket socket);
  void Adopt(std::shared_ptr<Connection> conn, PeerSlots::Id slot);
  // Closes the handshake or connection holding `slot` (already released from slots_).
  void CloseSlot(PeerSlots::Id slot, const Status& why);
  void Sweep();
  int64_t NowMs() const { return clock_ ? clock_->NowMs() : 0; }

  // Constant after construction.
  asio::io_context& io_;
  const size_t max_frame_bytes_;
  Connection::RequestHandler on_request_;
  Connection::CloseHandler on_close_;
  std::shared_ptr<ssl::context> tls_;
  ServerLimits limits_;
  const Clock* clock_ = nullptr;

  // Only on the io_context's thread.
  tcp::acceptor acceptor_;
  std::unique_ptr<ClockTimer> sweep_timer_;
  std::unique_ptr<ClockTimer> backoff_timer_;
  uint16_t port_ = 0;
  bool stopped_ = false;
  std::map<PeerSlots::Id, std::shared_ptr<Connection>> connections_;
  std::map<PeerSlots::Id, Handshake> handshakes_;
  PeerSlots slots_;
  PeerSlots::Id next_slot_ = 1;
};

}  // namespace snn
