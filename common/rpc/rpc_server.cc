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
      acceptor_(io),
      slots_(PeerSlotLimits{}) {}

RpcServer::~RpcServer() = default;

void RpcServer::set_limits(const ServerLimits& limits, const Clock* clock) {
  limits_ = limits;
  clock_ = clock;
  slots_ = PeerSlots(PeerSlotLimits{limits.max_connections, limits.always_admit,
                                    limits.max_anonymous_per_peer, limits.max_per_owner});
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
  const PeerSlots::Id slot = next_slot_++;
  const PeerSlots::Admission admission = slots_.Admit(slot, peer, NowMs());
  if (!admission.admitted) {
    LOG_EVERY_N(WARNING, 100) << "refused a connection from " << peer << " (" << google::COUNTER
                              << " so far): " << admission.refusal;
    socket.close(ignored);
    return;
  }
  if (admission.evicted) {
    LOG_EVERY_N(WARNING, 100) << "closed the oldest of " << limits_.max_anonymous_per_peer
                              << " connections from " << peer
                              << " that have not proven who they are, for a new one ("
                              << google::COUNTER << " so far)";
    CloseSlot(*admission.evicted,
              Status(Code::kResourceExhausted,
                     "too many connections from " + peer + " have not proven who they are"));
  }
  if (!tls_) {
    Adopt(Connection::Create(std::move(socket), max_frame_bytes_, on_request_, nullptr), slot);
    return;
  }
  auto stream = std::make_shared<std::unique_ptr<TlsStream>>(
      std::make_unique<TlsStream>(std::move(socket), *tls_));
  handshakes_[slot] = Handshake{stream, peer, NowMs()};
  (*stream)->async_handshake(
      ssl::stream_base::server, [this, stream, slot, peer](const boost::system::error_code& hec) {
        if (stopped_) return;
        if (handshakes_.erase(slot) == 0) return;  // timed out or evicted: closed and released
        if (hec || !*stream) {
          LOG_EVERY_N(WARNING, 100) << "TLS handshake with " << peer << " failed ("
                                    << google::COUNTER << " so far): " << hec.message();
          slots_.Release(slot);
          return;
        }
        Adopt(Connection::Create(std::move(*stream), max_frame_bytes_, on_request_, nullptr), slot);
      });
}

void RpcServer::Adopt(std::shared_ptr<Connection> conn, PeerSlots::Id slot) {
  conn->set_clock(clock_);
  conn->set_close_handler([this, slot](const std::shared_ptr<Connection>& c, const Status& why) {
    if (!why.ok() && why.code() != Code::kUnavailable) {
      LOG_EVERY_N(WARNING, 20) << "closed connection from " << c->peer() << ": " << why.ToString();
    }
    if (connections_.erase(slot) > 0) slots_.Release(slot);
    if (on_close_) on_close_(c, why);
  });
  conn->set_owner_handler(
      [this, slot](const std::shared_ptr<Connection>&, const std::string& owner) {
        const std::string refusal = slots_.Own(slot, owner);
        if (refusal.empty()) return Status::Ok();
        LOG_EVERY_N(WARNING, 100) << "refused a connection: " << refusal << " (" << google::COUNTER
                                  << " so far)";
        return Status(Code::kResourceExhausted, refusal + "; close some and try again");
      });
  connections_[slot] = conn;
  conn->Start();
}

void RpcServer::CloseSlot(PeerSlots::Id slot, const Status& why) {
  if (auto h = handshakes_.find(slot); h != handshakes_.end()) {
    boost::system::error_code ignored;
    (*h->second.stream)->next_layer().close(ignored);
    handshakes_.erase(h);
    return;
  }
  if (auto c = connections_.find(slot); c != connections_.end()) {
    const std::shared_ptr<Connection> conn = c->second;
    connections_.erase(c);  // released already: the close handler must not release it again
    conn->Close(why);
  }
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
    slots_.Release(it->first);
    it = handshakes_.erase(it);
  }
  for (PeerSlots::Id slot : slots_.AnonymousSince(now - limits_.anonymous_timeout_ms)) {
    if (!connections_.count(slot)) continue;  // still handshaking: the handshake limit applies
    slots_.Release(slot);
    CloseSlot(slot, DeadlineExceeded("did not prove who it is within " +
                                     std::to_string(limits_.anonymous_timeout_ms) + " ms"));
  }
  std::vector<std::shared_ptr<Connection>> expired;
  for (const auto& [slot, c] : connections_) {
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
  for (const auto& [slot, c] : open) c->Close(Unavailable("server is shutting down"));
  connections_.clear();
  slots_.Clear();
}

}  // namespace snn
