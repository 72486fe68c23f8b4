#include "common/rpc/connection.h"

#include <glog/logging.h>

#include <algorithm>

namespace snn {

std::shared_ptr<Connection> Connection::Create(tcp::socket socket, size_t max_frame_bytes,
                                               RequestHandler on_request, CloseHandler on_close) {
  return std::shared_ptr<Connection>(new Connection(std::move(socket), nullptr, max_frame_bytes,
                                                    std::move(on_request), std::move(on_close)));
}

std::shared_ptr<Connection> Connection::Create(std::unique_ptr<TlsStream> stream,
                                               size_t max_frame_bytes, RequestHandler on_request,
                                               CloseHandler on_close) {
  tcp::socket unused(stream->get_executor());
  return std::shared_ptr<Connection>(new Connection(std::move(unused), std::move(stream),
                                                    max_frame_bytes, std::move(on_request),
                                                    std::move(on_close)));
}

Connection::Connection(tcp::socket socket, std::unique_ptr<TlsStream> tls, size_t max_frame_bytes,
                       RequestHandler on_request, CloseHandler on_close)
    : max_frame_bytes_(max_frame_bytes),
      on_request_(std::move(on_request)),
      on_close_(std::move(on_close)),
      socket_(std::move(socket)),
      tls_(std::move(tls)) {
  if (tls_) peer_certificate_ = PeerOf(*tls_);
  boost::system::error_code ec;
  auto remote = lowest().remote_endpoint(ec);
  peer_ = ec ? "unknown" : remote.address().to_string() + ":" + std::to_string(remote.port());
  lowest().set_option(tcp::no_delay(true), ec);
}

Connection::~Connection() = default;

void Connection::Start() { ReadHeader(); }

void Connection::ReadHeader() {
  // A peer that does not read its answers, or keeps many requests unanswered, is not read from
  // until it catches up: what it can make the master hold is bounded.
  if (outbox_bytes_ > kMaxOutboxBytes || unanswered_ >= kMaxUnanswered) {
    read_paused_ = true;
    return;
  }
  auto self = shared_from_this();
  OnStream([&](auto& stream) {
    asio::async_read(
        stream, asio::buffer(header_), [self](const boost::system::error_code& ec, size_t) {
          if (self->closed_) return;  // completed after Close: drop it
          if (ec) {
            self->Close(
                Unavailable(ec == asio::error::eof ? "peer closed the connection" : ec.message()));
            return;
          }
          const uint32_t length = DecodeFrameLength(self->header_.data());
          if (length > self->max_frame_bytes_) {
            self->Close(InvalidArgument("frame of " + std::to_string(length) +
                                        " bytes exceeds the limit of " +
                                        std::to_string(self->max_frame_bytes_)));
            return;
          }
          self->in_frame_ = true;
          self->MarkActivity();
          self->body_.clear();
          self->ReadBody(length);
        });
  });
}

void Connection::ReadBody(uint32_t length) {
  // The buffer grows with what arrives, never ahead of it by more than 64 KiB or what has come
  // so far: a header that declares megabytes and then stalls costs the declared size nothing.
  const size_t have = body_.size();
  const size_t chunk = std::min<size_t>(length - have, std::max<size_t>(have, 4 << 10));
  body_.resize(have + chunk);
  auto self = shared_from_this();
  OnStream([&](auto& stream) {
    asio::async_read(
        stream, asio::buffer(body_.data() + have, chunk),
        [self, length](const boost::system::error_code& ec, size_t) {
          if (self->closed_) return;  // completed after Close: drop it
          if (ec) {
            self->Close(Unavailable("connection ended inside a frame: " + ec.message()));
            return;
          }
          self->MarkActivity();
          if (self->body_.size() < length) return self->ReadBody(length);
          self->in_frame_ = false;
          auto envelope = DecodeEnvelope(self->body_.data(), self->body_.size());
          std::vector<uint8_t>().swap(self->body_);  // a big frame's buffer goes with it
          if (!envelope.ok()) {
            self->Close(envelope.status());
            return;
          }
          self->OnFrame(std::move(envelope).value());
          if (!self->closed_) self->ReadHeader();
        });
  });
}

void Connection::MarkActivity() {
  if (clock_ != nullptr) last_activity_ms_ = clock_->NowMs();
}

void Connection::OnFrame(v1::Envelope envelope) {
  if (envelope.kind() == v1::Envelope::RESPONSE) {
    auto it = pending_calls_.find(envelope.id());
    if (it == pending_calls_.end()) {
      // A peer may send any number: one line in a hundred, counted.
      LOG_EVERY_N(WARNING, 100) << "response to unknown call " << envelope.id() << " from " << peer_
                                << " (" << google::COUNTER << " so far)";
      return;
    }
    ResponseCallback done = std::move(it->second);
    pending_calls_.erase(it);
    done(std::move(envelope));
    return;
  }
  if (closing_) return;  // answered its last: what follows is not read
  ++unanswered_;
  if (on_request_) on_request_(shared_from_this(), std::move(envelope));
}

void Connection::Call(const std::string& method, const google::protobuf::Message& request,
                      const v1::Credential& credential, ResponseCallback done) {
  if (closed_) {
    done(Unavailable("connection to " + peer_ + " is closed"));
    return;
  }
  v1::Envelope envelope;
  envelope.set_id(next_call_id_++);
  envelope.set_kind(v1::Envelope::REQUEST);
  envelope.set_method(method);
  *envelope.mutable_credential() = credential;
  request.SerializeToString(envelope.mutable_payload());
  pending_calls_.emplace(envelope.id(), std::move(done));
  Send(EncodeFrame(envelope));
}

void Connection::Reply(uint64_t request_id, const Status& status,
                       const google::protobuf::Message* response) {
  if (closed_) return;
  if (unanswered_ > 0) --unanswered_;
  v1::Envelope envelope;
  envelope.set_id(request_id);
  envelope.set_kind(v1::Envelope::RESPONSE);
  envelope.set_code(static_cast<int>(status.code()));
  if (!status.ok()) envelope.set_error(status.message());
  if (status.ok() && response != nullptr) response->SerializeToString(envelope.mutable_payload());
  Send(EncodeFrame(envelope));
}

void Connection::Send(std::string frame) {
  outbox_bytes_ += frame.size();
  outbox_.push_back(std::move(frame));
  if (!write_in_flight_) WriteMore();
}

void Connection::WriteMore() {
  if (outbox_.empty() || closed_) {
    write_in_flight_ = false;
    if (closing_ && !closed_) Close(*closing_);
    return;
  }
  write_in_flight_ = true;
  writing_.clear();
  std::vector<asio::const_buffer> buffers;
  while (!outbox_.empty()) {
    writing_.push_back(std::move(outbox_.front()));
    outbox_.pop_front();
  }
  buffers.reserve(writing_.size());
  for (const auto& f : writing_) buffers.emplace_back(asio::buffer(f));
  auto self = shared_from_this();
  OnStream([&](auto& stream) {
    asio::async_write(stream, buffers, [self](const boost::system::error_code& ec, size_t n) {
      if (ec) {
        self->Close(Unavailable("write failed: " + ec.message()));
        return;
      }
      self->outbox_bytes_ -= std::min(n, self->outbox_bytes_);
      self->writing_.clear();
      self->MarkActivity();
      if (self->read_paused_ && !self->closed_ && self->outbox_bytes_ <= kMaxOutboxBytes / 2 &&
          self->unanswered_ < kMaxUnanswered) {
        self->read_paused_ = false;
        self->ReadHeader();
      }
      self->WriteMore();
    });
  });
}

void Connection::CloseOnceWritten(const Status& why) {
  if (closed_ || closing_) return;
  closing_ = why;
  if (!write_in_flight_ && outbox_.empty()) Close(why);
}

void Connection::Close(const Status& why) {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  lowest().shutdown(tcp::socket::shutdown_both, ignored);
  lowest().close(ignored);
  auto calls = std::move(pending_calls_);
  pending_calls_.clear();
  for (auto& [id, done] : calls) done(why);
  auto self = shared_from_this();
  if (on_close_) {
    auto handler = std::move(on_close_);
    on_close_ = nullptr;
    handler(self, why);
  }
  on_request_ = nullptr;
}

}  // namespace snn
