#include "common/rpc_server.h"

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
  Accept();
  return Status::Ok();
}

void RpcServer::Accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (stopped_) return;
    if (ec) {
      LOG(WARNING) << "accept failed: " << ec.message();
    } else if (tls_) {
      boost::system::error_code ignored;
      const std::string peer = socket.remote_endpoint(ignored).address().to_string();
      auto stream = std::make_shared<std::unique_ptr<TlsStream>>(
          std::make_unique<TlsStream>(std::move(socket), *tls_));
      (*stream)->async_handshake(
          ssl::stream_base::server, [this, stream, peer](const boost::system::error_code& hec) {
            if (stopped_) return;
            if (hec) {
              LOG_EVERY_N(WARNING, 20)
                  << "TLS handshake with " << peer << " failed: " << hec.message();
              return;
            }
            Adopt(Connection::Create(std::move(*stream), max_frame_bytes_, on_request_, nullptr));
          });
    } else {
      Adopt(Connection::Create(std::move(socket), max_frame_bytes_, on_request_, nullptr));
    }
    Accept();
  });
}

void RpcServer::Adopt(std::shared_ptr<Connection> conn) {
  conn->set_close_handler([this](const std::shared_ptr<Connection>& c, const Status& why) {
    if (!why.ok() && why.code() != Code::kUnavailable) {
      LOG(WARNING) << "closed connection from " << c->peer() << ": " << why.ToString();
    }
    connections_.erase(c);
    if (on_close_) on_close_(c, why);
  });
  connections_.insert(conn);
  conn->Start();
}

void RpcServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  auto open = connections_;
  for (const auto& c : open) c->Close(Unavailable("server is shutting down"));
  connections_.clear();
}

}  // namespace snn
