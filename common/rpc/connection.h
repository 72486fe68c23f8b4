// A framed, bidirectional RPC connection over TCP: either side may send requests and replies.
// Used by the master for clients and agents, and by the agent for its session to the master.
// Thread contract: every method must be called on the thread running the socket's io_context;
// handlers are invoked there too. Owned by shared_ptr; it stays alive while I/O is pending.
#pragma once

#include <google/protobuf/message.h>

#include <array>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/base/clock.h"
#include "common/base/status.h"
#include "common/rpc/asio.h"
#include "common/rpc/frame.h"
#include "common/rpc/reply_sink.h"
#include "common/rpc/rpc_methods.h"
#include "common/rpc/tls.h"

namespace snn {

class Connection : public ReplySink, public std::enable_shared_from_this<Connection> {
 public:
  using RequestHandler = std::function<void(const std::shared_ptr<Connection>&, v1::Envelope)>;
  using CloseHandler = std::function<void(const std::shared_ptr<Connection>&, const Status&)>;
  // Called once with the response envelope (whose code may carry an error) or with the
  // error that ended the connection first.
  using ResponseCallback = std::function<void(Result<v1::Envelope>)>;

  static std::shared_ptr<Connection> Create(tcp::socket socket, size_t max_frame_bytes,
                                            RequestHandler on_request, CloseHandler on_close);
  // Over a TLS stream whose handshake is done.
  static std::shared_ptr<Connection> Create(std::unique_ptr<TlsStream> stream,
                                            size_t max_frame_bytes, RequestHandler on_request,
                                            CloseHandler on_close);
  ~Connection() override;

  // Begins reading frames.
  void Start();
  // Before Start only.
  void set_close_handler(CloseHandler on_close) { on_close_ = std::move(on_close); }
  void set_request_handler(RequestHandler on_request) { on_request_ = std::move(on_request); }

  // Sends a request of `method` (common/rpc/rpc_methods.h); `done` gets the response envelope.
  template <typename Request, typename Response>
  void Call(const RpcMethod<Request, Response>& method,
            const std::type_identity_t<Request>& request, const v1::Credential& credential,
            ResponseCallback done) {
    Call(std::string(method.name), request, credential, std::move(done));
  }
  // By name, with any message (tests and load tools that send what a method does not expect).
  void Call(const std::string& method, const google::protobuf::Message& request,
            const v1::Credential& credential, ResponseCallback done);

  // Answers `request_id`; `response` may be null when status is an error.
  void Reply(uint64_t request_id, const Status& status,
             const google::protobuf::Message* response) override;

  // Closes the socket; pending calls fail with `why`; the close handler runs once.
  void Close(const Status& why);
  // Reads no more requests, and closes once what is queued (an answer saying why) is written.
  void CloseOnceWritten(const Status& why);

  bool closed() const { return closed_; }
  // With a clock, the connection keeps when a frame last made progress (for idle and slow-read
  // limits its server enforces). Set before Start.
  void set_clock(const Clock* clock) {
    clock_ = clock;
    MarkActivity();
  }
  int64_t last_activity_ms() const { return last_activity_ms_; }
  bool in_frame() const { return in_frame_; }  // a frame's header came, its body has not
  size_t outbox_bytes() const { return outbox_bytes_; }
  // Above this many unwritten answer bytes the connection stops reading requests until half of
  // them are written: a peer that does not read cannot make the master buffer without bound.
  static constexpr size_t kMaxOutboxBytes = 4 << 20;
  // Requests read and not yet answered; at this many the connection stops reading.
  static constexpr size_t kMaxUnanswered = 8;
  const std::string& peer() const override { return peer_; }
  bool tls() const { return tls_ != nullptr; }
  // The peer's verified certificate (TLS only; empty when it showed none).
  const PeerCertificate& peer_certificate() const { return peer_certificate_; }

  // Free-form label set by the owner (an agent's node name); constant once set.
  void set_label(std::string label) { label_ = std::move(label); }
  const std::string& label() const { return label_; }

  // Who the connection proved it is ("uid 1000", "node node3"), for its server's per-owner limits
  // (see common/rpc/peer_slots.h). The first call counts; later ones return Ok and change
  // nothing. An error: the owner has too many connections; answer with it and close.
  using OwnerHandler =
      std::function<Status(const std::shared_ptr<Connection>&, const std::string&)>;
  void set_owner_handler(OwnerHandler on_owner) { on_owner_ = std::move(on_owner); }
  Status set_owner(const std::string& owner) {
    if (!owner_.empty() || owner.empty() || closed_) return Status::Ok();
    owner_ = owner;
    return on_owner_ ? on_owner_(shared_from_this(), owner_) : Status::Ok();
  }
  const std::string& owner() const { return owner_; }

 private:
  Connection(tcp::socket socket, std::unique_ptr<TlsStream> tls, size_t max_frame_bytes,
             RequestHandler on_request, CloseHandler on_close);
  // Runs `fn` with the stream frames travel on: the TLS stream, or the plain socket.
  template <typename Fn>
  void OnStream(Fn&& fn) {
    WithStream(tls_, socket_, std::forward<Fn>(fn));
  }
  tcp::socket& lowest() { return tls_ ? tls_->next_layer() : socket_; }
  void ReadHeader();
  void ReadBody(uint32_t length);
  void MarkActivity();
  void OnFrame(v1::Envelope envelope);
  void Send(std::string frame);
  void WriteMore();

  // Constant after construction.
  const size_t max_frame_bytes_;
  RequestHandler on_request_;
  CloseHandler on_close_;
  std::string peer_;
  PeerCertificate peer_certificate_;

  // Only on the io_context's thread.
  tcp::socket socket_;              // plain connections
  std::unique_ptr<TlsStream> tls_;  // TLS connections (socket_ then stays closed)
  std::array<uint8_t, kFrameHeaderBytes> header_{};
  std::vector<uint8_t> body_;
  std::deque<std::string> outbox_;
  std::vector<std::string> writing_;
  bool write_in_flight_ = false;
  size_t outbox_bytes_ = 0;  // queued and being written
  bool read_paused_ = false;
  size_t unanswered_ = 0;
  bool in_frame_ = false;
  const Clock* clock_ = nullptr;
  int64_t last_activity_ms_ = 0;
  bool closed_ = false;
  uint64_t next_call_id_ = 1;
  std::map<uint64_t, ResponseCallback> pending_calls_;
  std::string label_;
  std::string owner_;
  OwnerHandler on_owner_;
  std::optional<Status> closing_;  // CloseOnceWritten's reason
};

// Converts a response envelope into the typed response or the error it carries.
template <typename Response>
Result<Response> DecodeResponse(const Result<v1::Envelope>& envelope) {
  if (!envelope.ok()) return envelope.status();
  if (envelope->code() != 0) {
    return Status(static_cast<Code>(envelope->code()), envelope->error());
  }
  Response response;
  if (!response.ParseFromString(envelope->payload())) {
    return Internal("malformed response payload");
  }
  return response;
}

}  // namespace snn
