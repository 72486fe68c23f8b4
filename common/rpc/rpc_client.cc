#include "common/rpc/rpc_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <vector>

#include "common/rpc/clock_timer.h"

namespace snn {

namespace {
// Between tries while no master leads or the named leader cannot be reached.
constexpr int64_t kRetryPauseMs = 100;
}  // namespace

RpcClient::RpcClient(std::chrono::milliseconds timeout, size_t max_frame_bytes, const Clock* clock)
    : timeout_(timeout),
      max_frame_bytes_(max_frame_bytes),
      clock_(clock != nullptr ? *clock : default_clock_),
      socket_(io_) {}

RpcClient::~RpcClient() { CloseSockets(); }

void RpcClient::CloseSockets() {
  boost::system::error_code ignored;
  if (tls_) tls_->next_layer().close(ignored);
  if (local_) local_->close(ignored);
  socket_.close(ignored);
}

bool RpcClient::RunUntil(const bool& done) {
  io_.restart();
  bool timed_out = false;
  ClockTimer deadline(io_, clock_);
  deadline.WaitMs(timeout_.count(), [&timed_out](bool expired) { timed_out = expired; });
  while (!done && !timed_out && io_.run_one() > 0) {
  }
  deadline.Cancel();
  const bool answered = done;
  if (!answered) CloseSockets();
  io_.restart();
  io_.run();  // let the cancelled timer and any aborted handler finish
  return answered;
}

Status RpcClient::Connect(const HostPort& address) {
  target_ = address.ToString();
  host_ = address.host;
  if (masters_.empty()) masters_ = {address};  // a standby's redirect is followed from here
  tcp::resolver resolver(io_);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(address.host, std::to_string(address.port), ec);
  if (ec) return Unavailable("cannot resolve " + target_ + ": " + ec.message());
  bool done = false;
  boost::system::error_code result;
  asio::async_connect(socket_, endpoints,
                      [&](const boost::system::error_code& e, const tcp::endpoint&) {
                        result = e;
                        done = true;
                      });
  if (!RunUntil(done)) {
    return Unavailable("cannot reach the master at " + target_ + ": no answer within " +
                       std::to_string(timeout_.count()) + " ms");
  }
  if (result) return Unavailable("cannot reach the master at " + target_ + ": " + result.message());
  socket_.set_option(tcp::no_delay(true), ec);
  if (tls_context_) return Handshake();
  return Status::Ok();
}

Status RpcClient::Handshake() {
  tls_ = std::make_unique<TlsStream>(std::move(socket_), *tls_context_);
  socket_ = tcp::socket(io_);
  ExpectPeerHost(*tls_, host_);
  bool done = false;
  boost::system::error_code result;
  tls_->async_handshake(ssl::stream_base::client, [&](const boost::system::error_code& e) {
    result = e;
    done = true;
  });
  if (!RunUntil(done)) {
    return DeadlineExceeded("no answer from " + target_ + " within " +
                            std::to_string(timeout_.count()) + " ms (TLS handshake)");
  }
  if (result) {
    const std::string refusal = CertificateRefusal(*tls_, host_);
    tls_.reset();
    if (!refusal.empty()) {
      return Unauthenticated("TLS with the master at " + target_ + ": " + refusal);
    }
    if (result == asio::error::eof || result == ssl::error::stream_truncated ||
        result == asio::error::connection_reset) {
      // Closed by the other side before it showed a certificate: not a trust problem.
      return Unavailable("the master at " + target_ +
                         " closed the connection during the TLS handshake: it is shedding "
                         "connections (too many from this address or in all; its log says which) "
                         "or it does not speak TLS; try again");
    }
    return Unavailable("TLS handshake with the master at " + target_ + " failed (" +
                       result.message() +
                       "); is the CA file this cluster's, and is the server an snn master?");
  }
  const PeerCertificate peer = PeerOf(*tls_);
  if (peer.role != "master") {
    tls_.reset();
    return Unauthenticated("the server at " + target_ + " holds a certificate for " +
                           (peer.role.empty() ? "no role" : "a " + peer.role) +
                           ", not for the master");
  }
  return Status::Ok();
}

Status RpcClient::ConnectAny(std::vector<HostPort> masters) {
  masters_ = std::move(masters);
  if (masters_.empty()) return InvalidArgument("no master address given");
  Status last;
  for (current_ = 0; current_ < masters_.size(); ++current_) {
    last = current_ == 0 ? Connect(masters_[0]) : Reconnect(masters_[current_]);
    if (last.ok()) return last;
  }
  current_ = 0;
  return last;
}

Status RpcClient::ConnectLocal(const std::string& socket_path) {
  Disconnect();
  target_ = "the shared connection at " + socket_path;
  masters_.clear();  // the relay follows the leader
  auto local = std::make_unique<asio::local::stream_protocol::socket>(io_);
  boost::system::error_code ec;
  local->connect(asio::local::stream_protocol::endpoint(socket_path), ec);
  if (ec) return Unavailable("cannot reach " + target_ + ": " + ec.message());
  ucred peer{};
  socklen_t size = sizeof(peer);
  if (getsockopt(local->native_handle(), SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 ||
      peer.uid != geteuid()) {
    return Unauthenticated(target_ + " is not served by a process of this user");
  }
  local_ = std::move(local);
  return Status::Ok();
}

void RpcClient::Disconnect() {
  CloseSockets();
  tls_.reset();
  local_.reset();
  socket_ = tcp::socket(io_);
}

Status RpcClient::Reconnect(const HostPort& address) {
  Disconnect();
  return Connect(address);
}

bool RpcClient::connected() const {
  if (local_) return local_->is_open();
  return tls_ ? tls_->next_layer().is_open() : socket_.is_open();
}

bool RpcClient::Usable() {
  if (!connected()) return false;
  pollfd p{};
  p.fd = local_ ? local_->native_handle()
         : tls_ ? tls_->next_layer().native_handle()
                : socket_.native_handle();
  p.events = POLLIN | POLLRDHUP;
  return poll(&p, 1, 0) == 0;
}

Status RpcClient::ReconnectToConfigured() {
  Status last = Unavailable("not connected to " + target_);
  for (size_t tried = 0; tried < masters_.size(); ++tried) {
    const size_t at = (current_ + tried) % masters_.size();
    last = Reconnect(masters_[at]);
    if (last.ok()) {
      current_ = at;
      return last;
    }
  }
  return last;
}

Result<v1::Envelope> RpcClient::CallRaw(const std::string& method,
                                        const google::protobuf::Message& request) {
  v1::Envelope envelope;
  envelope.set_method(method);
  request.SerializeToString(envelope.mutable_payload());
  return Exchange(std::move(envelope), /*mint=*/true);
}

Result<v1::Envelope> RpcClient::Forward(v1::Envelope request) {
  return Exchange(std::move(request), /*mint=*/false);
}

Result<v1::Envelope> RpcClient::Exchange(v1::Envelope request, bool mint) {
  // A connection lost earlier (a failed call, or a redirect to a leader that could not be
  // reached) is not a dead end: go back to the configured masters, as at the start.
  if (!connected()) {
    if (Status s = ReconnectToConfigured(); !s.ok()) return s;
  }
  auto reply = CallOnce(request, mint);
  if (masters_.empty() || !reply.ok() || reply->code() != static_cast<int>(Code::kNotLeader)) {
    return reply;
  }
  // A standby answered: go to the leader it names (or, while none leads, the next master).
  const int64_t give_up_ms = clock_.NowMs() + timeout_.count();
  while (reply.ok() && reply->code() == static_cast<int>(Code::kNotLeader) &&
         clock_.NowMs() < give_up_ms) {
    const std::string named = LeaderNamedIn(Status(Code::kNotLeader, reply->error()));
    auto leader = named.empty() ? Result<HostPort>(NotFound("")) : ParseHostPort(named);
    if (!leader.ok() || leader->ToString() == target_) {
      // None leads yet (a takeover under way): ask the next master after a pause.
      clock_.SleepMs(kRetryPauseMs);
      current_ = (current_ + 1) % masters_.size();
      leader = masters_[current_];
    }
    Status connected = Reconnect(*leader);
    while (!connected.ok() && clock_.NowMs() < give_up_ms) {
      clock_.SleepMs(kRetryPauseMs);
      current_ = (current_ + 1) % masters_.size();
      connected = Reconnect(masters_[current_]);
    }
    if (!connected.ok()) return connected;
    reply = CallOnce(request, mint);
  }
  return reply;
}

Result<v1::Envelope> RpcClient::CallOnce(v1::Envelope& envelope, bool mint) {
  if (!connected()) return Unavailable("not connected to " + target_);
  if (mint) {
    if (mint_ && (credential_.munge().empty() || clock_.NowMs() - minted_ms_ >= reuse_ms_)) {
      auto credential = mint_();
      if (!credential.ok()) return credential.status();
      credential_.set_munge(*credential);
      minted_ms_ = clock_.NowMs();
    }
    *envelope.mutable_credential() = credential_;
  }
  envelope.set_id(next_id_++);
  envelope.set_kind(v1::Envelope::REQUEST);
  const std::string frame = EncodeFrame(envelope);

  bool done = false;
  Status status;
  std::array<uint8_t, kFrameHeaderBytes> header{};
  std::vector<uint8_t> body;
  OnStream([&](auto& stream) {
    asio::async_write(
        stream, asio::buffer(frame), [&](const boost::system::error_code& ec, size_t) {
          if (ec) {
            status = Unavailable("send to " + target_ + " failed: " + ec.message());
            done = true;
            return;
          }
          asio::async_read(
              stream, asio::buffer(header), [&](const boost::system::error_code& ec2, size_t) {
                if (ec2) {
                  status = Unavailable("the master at " + target_ +
                                       " closed the connection: " + ec2.message());
                  done = true;
                  return;
                }
                const uint32_t length = DecodeFrameLength(header.data());
                if (length > max_frame_bytes_) {
                  status = Internal(
                      "the server at " + target_ +
                      " answered with something that is not an snn frame; is it the master?");
                  done = true;
                  return;
                }
                body.resize(length);
                asio::async_read(stream, asio::buffer(body),
                                 [&](const boost::system::error_code& ec3, size_t) {
                                   if (ec3)
                                     status = Unavailable("response from " + target_ +
                                                          " cut short: " + ec3.message());
                                   done = true;
                                 });
              });
        });
  });
  if (!RunUntil(done)) {
    return DeadlineExceeded("no answer from " + target_ + " within " +
                            std::to_string(timeout_.count()) + " ms");
  }
  // A connection that failed or fell out of step is closed, so that the next call connects anew.
  if (!status.ok()) {
    Disconnect();
    return status;
  }
  auto response = DecodeEnvelope(body.data(), body.size());
  if (!response.ok() || response->id() != envelope.id()) {
    Disconnect();
    return Internal((response.ok() ? "response id mismatch from " : "garbled response from ") +
                    target_);
  }
  return response;
}

}  // namespace snn
