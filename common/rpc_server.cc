#include "common/rpc_server.h"

#include <glog/logging.h>

namespace snn {

RpcServer::RpcServer(asio::io_context& io, size_t max_frame_bytes,
                     Connection::RequestHandler on_request, Connection::CloseHandler on_close)
    : io_(io),
      max_frame_bytes_(max_frame_bytes),
      on_request_(std::move(on_request)),
      on_close_(std::move(on_close)),
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
    } else {
      auto conn = Connection::Create(
          std::move(socket), max_frame_bytes_, on_request_,
          [this](const std::shared_ptr<Connection>& c, const Status& why) {
            if (!why.ok() && why.code() != Code::kUnavailable) {
              LOG(WARNING) << "closed connection from " << c->peer() << ": " << why.ToString();
            }
            connections_.erase(c);
            if (on_close_) on_close_(c, why);
          });
      connections_.insert(conn);
      conn->Start();
    }
    Accept();
  });
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
