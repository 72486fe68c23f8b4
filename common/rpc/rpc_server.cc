#include "common/rpc/rpc_server.h"

#include <glog/logging.h>

namespace snn {

RpcServer::RpcServer(asio::io_context& io, size_t max_frame_bytes,
                     Connection::RequestHandler on_request, Connection::CloseHandler on_close,
                     std::shared_ptr<ssl::context> tls)
    : io_(io),
      max_frame_bytes_(max_frame_bytes),
      on_request_(std::move(on_request)),
      on_close_(std::move(on_close)),
      tls_(std::move(tls)),
      acceptor_(io) {}

RpcServer::~RpcServer() = default;

void RpcServer::set_limits(const ServerLimits& limits, const Clock* clock) {
  limits_ = limits;
  clock_ = clock;
}

Status RpcServer::Listen(const HostPort& address) {
  boost::system::error_code ec;
  auto ip = asio::ip::make_address(address.host, ec);
  if (ec) return InvalidArgument("cannot listen on '" + address.host + "': not an IP address");
  tcp::endpoint endpoint(ip, address.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Unavailable("cannot listen on " + address.ToString() + ": " + ec.message());
  port_ = acceptor_.local_endpoint().port();
  if (clock_ != nullptr) {
    sweep_timer_ = std::make_unique<ClockTimer>(io_, *clock_);
    backoff_timer_ = std::make_unique<ClockTimer>(io_, *clock_);
    Sweep();
  }
  Accept();
  return Status::Ok();
}

void RpcServer::Accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (stopped_) return;
    if (ec) {
      // Out of file descriptors, typically: the pending connection stays queued, so accepting
      // again at once would spin. Wait, and say so rarely.
      LOG_EVERY_N(WARNING, 100) << "accept failed (" << google::COUNTER
                                << " times so far): " << ec.message();
      if (backoff_timer_) {
        backoff_timer_->WaitMs(limits_.accept_backoff_ms, [this](bool expired) {
          if (expired && !stopped_) Accept();
        });
        return;
      }
    } else {
      OnAccepted(std::move(socket));
    }
    Accept();
  });
}

void RpcServer::OnAccepted(tcp::socket socket) {
  boost::system::error_code ignored;
  const std::string peer = socket.remote_endpoint(ignored).address().to_string();
  const size_t open = connections_.size() + handshakes_.size();
  // A peer with only a few connections (an operator's snnctl) gets in even when floods from
  // other addresses have filled the total.
  const bool full = open >= limits_.max_connections && per_peer_[peer] >= limits_.always_admit;
  if (full || per_peer_[peer] >= limits_.max_per_peer) {
    LOG_EVERY_N(WARNING, 100) << "refused a connection from " << peer << " (" << google::COUNTER
                              << " so far): "
                              << (open >= limits_.max_connections
                                      ? std::to_string(open) + " connections are open"
                                      : std::to_string(per_peer_[peer]) + " are open from it");
    socket.close(ignored);
    if (per_peer_[peer] == 0) per_peer_.erase(peer);
    return;
  }
  ++per_peer_[peer];
  if (!tls_) {
    Adopt(Connection::Create(std::move(socket), max_frame_bytes_, on_request_, nullptr), peer);
    return;
  }
  auto stream = std::make_shared<std::unique_ptr<TlsStream>>(
      std::make_unique<TlsStream>(std::move(socket), *tls_));
  const TlsStream* key = stream->get();
  handshakes_[key] = Handshake{stream, peer, clock_ ? clock_->NowMs() : 0};
  (*stream)->async_handshake(
      ssl::stream_base::server, [this, stream, key, peer](const boost::system::error_code& hec) {
        if (stopped_) return;
        if (handshakes_.erase(key) == 0) return;  // timed out: already closed and released
        if (hec || !*stream) {
          LOG_EVERY_N(WARNING, 100) << "TLS handshake with " << peer << " failed ("
                                    << google::COUNTER << " so far): " << hec.message();
          Release(peer);
          return;
        }
        Adopt(Connection::Create(std::move(*stream), max_frame_bytes_, on_request_, nullptr), peer);
      });
}

void RpcServer::Adopt(std::shared_ptr<Connection> conn, const std::string& peer) {
  conn->set_clock(clock_);
  conn->set_close_handler([this, peer](const std::shared_ptr<Connection>& c, const Status& why) {
    if (!why.ok() && why.code() != Code::kUnavailable) {
      LOG_EVERY_N(WARNING, 20) << "closed connection from " << c->peer() << ": " << why.ToString();
    }
    if (connections_.erase(c) > 0) Release(peer);
    if (on_close_) on_close_(c, why);
  });
  connections_.insert(conn);
  conn->Start();
}

void RpcServer::Release(const std::string& peer) {
  auto it = per_peer_.find(peer);
  if (it != per_peer_.end() && --it->second == 0) per_peer_.erase(it);
}

void RpcServer::Sweep() {
  if (stopped_) return;
  const int64_t now = clock_->NowMs();
  for (auto it = handshakes_.begin(); it != handshakes_.end();) {
    if (now - it->second.started_ms < limits_.handshake_timeout_ms) {
      ++it;
      continue;
    }
    boost::system::error_code ignored;
    (*it->second.stream)->next_layer().close(ignored);
    LOG_EVERY_N(WARNING, 100) << "no TLS handshake from " << it->second.peer << " within "
                              << limits_.handshake_timeout_ms << " ms; closed";
    Release(it->second.peer);
    it = handshakes_.erase(it);
  }
  std::vector<std::shared_ptr<Connection>> expired;
  for (const auto& c : connections_) {
    const int64_t quiet = now - c->last_activity_ms();
    if ((c->in_frame() && quiet >= limits_.frame_timeout_ms) || quiet >= limits_.idle_timeout_ms) {
      expired.push_back(c);
    }
  }
  for (const auto& c : expired) {
    c->Close(DeadlineExceeded(c->in_frame()
                                  ? "a frame did not arrive within " +
                                        std::to_string(limits_.frame_timeout_ms) + " ms"
                                  : "idle for " + std::to_string(limits_.idle_timeout_ms) + " ms"));
  }
  sweep_timer_->WaitMs(limits_.sweep_ms, [this](bool fired) {
    if (fired) Sweep();
  });
}

void RpcServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  if (sweep_timer_) sweep_timer_->Cancel();
  if (backoff_timer_) backoff_timer_->Cancel();
  for (auto& [key, h] : handshakes_) (*h.stream)->next_layer().close(ignored);
  handshakes_.clear();
  auto open = connections_;
  for (const auto& c : open) c->Close(Unavailable("server is shutting down"));
  connections_.clear();
  per_peer_.clear();
}

}  // namespace snn
