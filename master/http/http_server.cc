#include "master/http/http_server.h"

#include <glog/logging.h>

// clang-format off
#include "common/rpc/asio.h"
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on

#include <array>
#include <cctype>
#include <deque>

namespace snn {

namespace beast = boost::beast;
namespace http = boost::beast::http;

std::string HttpRequest::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

struct HttpServer::SessionBase {
  virtual ~SessionBase() = default;
  virtual void Start() = 0;
  virtual void Close() = 0;
  enum class Phase {
    kHead,    // waiting for (the rest of) a request's head
    kBody,    // reading a body the server admitted
    kBusy,    // handled, answering, or streaming
    kLinger,  // refused before its body: the answer is out, what still comes is drained
  };
  PeerSlots::Id id = 0;
  std::string address;  // the peer's IP address
  std::string owner;    // whose connection it is ("" while anonymous)
  Phase phase = Phase::kHead;
  int64_t phase_since_ms = 0;
  size_t body_reserved = 0;  // of the bodies' budget, while reading one
  bool upload = false;       // reading an upload (counted in uploads_, not the bodies' budget)
  std::string body_owner;    // whose budget that is
};

namespace {

// A connection refused before its body is read drains what still comes this long, and at most
// this much, then ends.
constexpr int64_t kLingerMs = 2000;
constexpr size_t kLingerBytes = 64 * 1024;

std::string StatusLine(int status) {
  const auto reason = http::obsolete_reason(static_cast<http::status>(status));
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
}

template <typename Stream>
tcp::socket& Lowest(Stream& stream) {
  if constexpr (std::is_same_v<Stream, tcp::socket>) {
    return stream;
  } else {
    return stream.next_layer();
  }
}

template <typename Stream>
class Session : public HttpServer::SessionBase,
                public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, HttpServer& server, const Clock& clock, const HttpServer::Handler& handler,
          const HttpLimits& limits, std::function<void(Session*)> on_gone)
      : stream_(std::move(stream)),
        server_(server),
        clock_(clock),
        handler_(handler),
        limits_(limits),
        on_gone_(std::move(on_gone)) {
    boost::system::error_code ec;
    auto endpoint = Lowest(stream_).remote_endpoint(ec);
    if (!ec) peer_ = endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  }

  void Start() override {
    Enter(Phase::kHead);
    if constexpr (std::is_same_v<Stream, tcp::socket>) {
      Read();
    } else {
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](boost::system::error_code ec) {
                                if (ec) return self->Close();
                                self->Read();
                              });
    }
  }

  void Close() override {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    Lowest(stream_).shutdown(tcp::socket::shutdown_both, ignored);
    Lowest(stream_).close(ignored);
    if (on_close_) std::exchange(on_close_, nullptr)();
    on_gone_(this);
  }

  bool closed() const { return closed_; }
  const std::string& peer() const { return peer_; }

  // Queues bytes; `then` runs once they are written (not when the connection failed).
  void Write(std::string bytes, std::function<void()> then = nullptr) {
    if (closed_) return;
    backlog_ += bytes.size();
    outbox_.push_back({std::move(bytes), std::move(then)});
    if (!writing_) WriteNext();
  }

  // `unread_body`: the request's body was never read; the connection then ends gently (the
  // client sees the answer rather than a reset while it still sends).
  void Respond(HttpResponse response, bool keep_alive, bool unread_body = false) {
    std::string head = StatusLine(response.status);
    head += "Content-Type: " + response.content_type + "\r\n";
    head += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
    head += "Cache-Control: no-cache\r\n";
    head += "X-Content-Type-Options: nosniff\r\n";
    for (const auto& [name, value] : response.headers) head += name + ": " + value + "\r\n";
    if (!keep_alive) head += "Connection: close\r\n";
    head += "\r\n";
    Enter(Phase::kBusy);
    Write(head + response.body, [self = this->shared_from_this(), keep_alive, unread_body] {
      if (unread_body) return self->Linger();
      if (!keep_alive) return self->Close();
      self->Read();
    });
  }

  void OpenStream() {
    Write(StatusLine(200) +
          "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
          "X-Accel-Buffering: no\r\nConnection: close\r\n\r\n");
    DrainUntilClosed();
  }

  // An event stream reads nothing more, but keeps a read open so that a client that goes is
  // noticed at once (its slot freed), not at the next write.
  void DrainUntilClosed() {
    stream_.async_read_some(asio::buffer(drain_), [self = this->shared_from_this()](
                                                      boost::system::error_code ec, size_t) {
      if (ec) return self->Close();
      self->DrainUntilClosed();
    });
  }

  void set_on_close(std::function<void()> on_close) {
    if (closed_) {
      if (on_close) on_close();
      return;
    }
    on_close_ = std::move(on_close);
  }
  size_t backlog_bytes() const { return backlog_; }

 private:
  void Enter(Phase next) {
    phase = next;
    phase_since_ms = clock_.NowMs();
  }

  void Read() {
    if (closed_) return;
    Enter(Phase::kHead);
    parser_.emplace();
    // The head's Content-Length is judged in OnHead (an upload may pass the body limit); the
    // body read is then bounded by what was admitted.
    parser_->body_limit(std::max(limits_.max_body_bytes, limits_.max_upload_bytes));
    parser_->header_limit(kMaxHeadBytes);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](boost::system::error_code ec,
                                                              size_t) { self->OnHead(ec); });
  }

  // Refused before its body: no more requests on this connection. What the client still sends
  // is read and dropped, so that it sees the answer rather than a reset, but only a little of it
  // (draining a refused megabyte costs its decryption): past kLingerBytes, or kLingerMs (the
  // sweep), the connection ends.
  void Linger() {
    if (closed_) return;
    Enter(Phase::kLinger);
    boost::system::error_code ignored;
    Lowest(stream_).shutdown(tcp::socket::shutdown_send, ignored);
    Drop(kLingerBytes);
  }
  void Drop(size_t budget) {
    stream_.async_read_some(asio::buffer(drain_), [self = this->shared_from_this(), budget](
                                                      boost::system::error_code ec, size_t n) {
      if (ec || n >= budget) return self->Close();
      self->Drop(budget - n);
    });
  }

  // A read failed: one line back when the request was bad, else the connection ends.
  void OnReadError(boost::system::error_code ec) {
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
      return Respond(TooLarge(), false);
    }
    if (ec != http::error::end_of_stream && ec != asio::error::operation_aborted &&
        ec != asio::error::eof && ec != ssl::error::stream_truncated) {
      HttpResponse bad{400,
                       "application/json",
                       "{\"error\":\"malformed HTTP request: " + ec.message() +
                           "\",\"code\":\"INVALID_ARGUMENT\"}\n",
                       {}};
      return Respond(std::move(bad), false);
    }
    Close();
  }

  HttpResponse TooLarge() const {
    return HttpResponse{
        413,
        "application/json",
        "{\"error\":\"the request is too large (body at most " +
            std::to_string(limits_.max_body_bytes) + " bytes, a job's form upload with its model " +
            std::to_string(limits_.max_upload_bytes >> 20) +
            " MiB with Content-Length; headers 16 KiB)\",\"code\":\"INVALID_ARGUMENT\"}\n",
        {}};
  }

  void OnHead(boost::system::error_code ec);
  void OnBody(boost::system::error_code ec);

  // Everything queued goes out in one write (an event stream under load gets many frames
  // between two writes); the callbacks of what it carried run once it is written.
  void WriteNext() {
    if (closed_ || outbox_.empty()) {
      writing_ = false;
      return;
    }
    writing_ = true;
    writing_bytes_.clear();
    std::vector<std::function<void()>> then;
    for (auto& out : outbox_) {
      writing_bytes_ += out.bytes;
      if (out.then) then.push_back(std::move(out.then));
    }
    outbox_.clear();
    asio::async_write(stream_, asio::buffer(writing_bytes_),
                      [self = this->shared_from_this(), then = std::move(then)](
                          boost::system::error_code ec, size_t n) {
                        if (ec) return self->Close();
                        self->backlog_ -= n;
                        for (const auto& fn : then) fn();
                        self->WriteNext();
                      });
  }

  void Dispatch(bool keep_alive);

  static constexpr size_t kMaxHeadBytes = 16 * 1024;
  struct Out {
    std::string bytes;
    std::function<void()> then;
  };
  Stream stream_;
  HttpServer& server_;
  const Clock& clock_;
  const HttpServer::Handler& handler_;
  const HttpLimits& limits_;
  std::function<void(Session*)> on_gone_;
  std::string peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpRequest request_;  // the one being read: its head, then its body
  std::deque<Out> outbox_;
  std::string writing_bytes_;  // what the write in flight carries
  std::array<char, 512> drain_{};
  size_t backlog_ = 0;
  bool writing_ = false;
  bool closed_ = false;
  std::function<void()> on_close_;
};

template <typename Stream>
class Stream_ : public HttpStream {
 public:
  explicit Stream_(std::shared_ptr<Session<Stream>> session) : session_(std::move(session)) {}
  void Send(std::string chunk) override { session_->Write(std::move(chunk)); }
  bool closed() const override { return session_->closed(); }
  void set_on_close(std::function<void()> on_close) override {
    session_->set_on_close(std::move(on_close));
  }
  size_t backlog_bytes() const override { return session_->backlog_bytes(); }
  void Close() override { session_->Close(); }
  void End() override {
    session_->Write("", [session = session_] { session->Close(); });
  }

 private:
  std::shared_ptr<Session<Stream>> session_;
};

template <typename Stream>
class Reply : public HttpReply {
 public:
  Reply(std::shared_ptr<Session<Stream>> session, bool keep_alive)
      : session_(std::move(session)), keep_alive_(keep_alive) {}
  void Respond(HttpResponse response) override {
    if (done_) return;
    done_ = true;
    session_->Respond(std::move(response), keep_alive_);
  }
  std::shared_ptr<HttpStream> OpenStream() override {
    done_ = true;
    session_->OpenStream();
    return std::make_shared<Stream_<Stream>>(session_);
  }
  bool abandoned() const override { return session_->closed(); }

 private:
  std::shared_ptr<Session<Stream>> session_;
  const bool keep_alive_;
  bool done_ = false;
};

template <typename Stream>
void Session<Stream>::OnHead(boost::system::error_code ec) {
  if (ec) return OnReadError(ec);
  const auto& message = parser_->get();
  request_ = HttpRequest{};
  request_.method = std::string(message.method_string());
  request_.target = std::string(message.target());
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request_.headers[name] = std::string(field.value());
  }
  request_.peer = peer_;
  const bool keep_alive = message.keep_alive();
  size_t body_bytes = 0;
  if (!parser_->is_done()) {
    const auto length = parser_->content_length();
    // Only an upload with its length may pass the body limit.
    const size_t limit = length ? server_.BodyLimit(request_) : limits_.max_body_bytes;
    if (length && *length > limit) return Respond(TooLarge(), false, true);
    body_bytes = length ? static_cast<size_t>(*length) : limits_.max_body_bytes;
  }
  if (auto refusal = server_.Admit(*this, request_, body_bytes)) {
    return Respond(*std::move(refusal), false, body_bytes > 0);
  }
  if (body_bytes == 0) return Dispatch(keep_alive);
  parser_->body_limit(body_bytes);
  Enter(Phase::kBody);
  auto read_body = [self = this->shared_from_this()] {
    http::async_read(self->stream_, self->buffer_, *self->parser_,
                     [self](boost::system::error_code ec, size_t) { self->OnBody(ec); });
  };
  if (beast::iequals(request_.Header("expect"), "100-continue")) {
    return Write("HTTP/1.1 100 Continue\r\n\r\n", read_body);
  }
  read_body();
}

template <typename Stream>
void Session<Stream>::OnBody(boost::system::error_code ec) {
  server_.BodyDone(*this);
  if (ec) return OnReadError(ec);
  request_.body = std::move(parser_->get().body());
  Dispatch(parser_->get().keep_alive());
}

template <typename Stream>
void Session<Stream>::Dispatch(bool keep_alive) {
  Enter(Phase::kBusy);
  parser_.reset();
  // A big body's buffer is not kept for the next request.
  if (buffer_.capacity() > kMaxHeadBytes) buffer_.shrink_to_fit();
  handler_(std::move(request_),
           std::make_shared<Reply<Stream>>(this->shared_from_this(), keep_alive));
}

}  // namespace

HttpServer::HttpServer(asio::io_context& io, const Clock& clock, Handler handler, HttpGate gate,
                       std::shared_ptr<ssl::context> tls, HttpLimits limits)
    : io_(io),
      clock_(clock),
      handler_(std::move(handler)),
      gate_(std::move(gate)),
      tls_(std::move(tls)),
      limits_(limits),
      acceptor_(io),
      sweep_timer_(io, clock),
      slots_(PeerSlotLimits{limits.max_connections, limits.always_admit,
                            limits.max_anonymous_per_address, limits.max_per_user}) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Listen(const HostPort& address) {
  boost::system::error_code ec;
  auto ip = asio::ip::make_address(address.host, ec);
  if (ec) return InvalidArgument("cannot listen on '" + address.host + "': not an IP address");
  tcp::endpoint endpoint(ip, address.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Unavailable("cannot listen for HTTP on " + address.host + ":" +
                       std::to_string(address.port) + ": " + ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  Accept();
  Sweep();
  return Status::Ok();
}

void HttpServer::Accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (stopped_) return;
    if (ec) {
      // EMFILE and the like: try again shortly rather than spin.
      sweep_timer_.Cancel();
      sweep_timer_.WaitMs(100, [this](bool) {
        if (stopped_) return;
        Accept();
        Sweep();
      });
      return;
    }
    Start(std::move(socket));
    Accept();
  });
}

void HttpServer::Start(tcp::socket socket) {
  boost::system::error_code peer_ec;
  const auto peer = socket.remote_endpoint(peer_ec);
  const std::string address = peer_ec ? std::string() : peer.address().to_string();
  const PeerSlots::Id id = next_id_++;
  const PeerSlots::Admission admission = slots_.Admit(id, address, clock_.NowMs());
  if (!admission.admitted) {
    boost::system::error_code ignored;
    socket.close(ignored);
    return;
  }
  if (admission.evicted) {
    // The address's oldest anonymous connection makes room (already released from the slots).
    if (auto it = sessions_.find(*admission.evicted); it != sessions_.end()) {
      auto evicted = it->second;
      evicted->Close();
    }
  }
  auto gone = [this](SessionBase* s) { Gone(s); };
  std::shared_ptr<SessionBase> session;
  if (tls_) {
    session = std::make_shared<Session<TlsStream>>(TlsStream(std::move(socket), *tls_), *this,
                                                   clock_, handler_, limits_, gone);
  } else {
    session = std::make_shared<Session<tcp::socket>>(std::move(socket), *this, clock_, handler_,
                                                     limits_, gone);
  }
  session->id = id;
  session->address = address;
  sessions_.emplace(id, session);
  session->Start();
}

void HttpServer::Gone(SessionBase* s) {
  auto it = sessions_.find(s->id);
  if (it == sessions_.end() || it->second.get() != s) return;
  BodyDone(*s);
  slots_.Release(s->id);
  // Destroyed after the current handler returns: the session may be mid-call.
  asio::post(io_, [keep = it->second] {});
  sessions_.erase(it);
}

std::optional<HttpResponse> HttpServer::Admit(SessionBase& session, const HttpRequest& head,
                                              size_t body_bytes) {
  auto owner = gate_.owner_of(head);
  if (!owner.ok()) {
    // A token that is refused: a request without a body goes on (its route may need none, and
    // refuses it with the same line); one with a body is not read.
    if (body_bytes > 0) return gate_.refusal(owner.status());
    return std::nullopt;
  }
  if (owner->empty()) {
    if (body_bytes == 0) return std::nullopt;
    return gate_.refusal(Unauthenticated(
        "a request with a body needs a token: send 'Authorization: Bearer TOKEN' (snnctl token "
        "create makes one)"));
  }
  // The connection is its first user's (a proxy may carry others' requests on it later: their
  // bodies count against their own budgets).
  if (session.owner.empty()) {
    session.owner = *owner;
    const std::string refusal = slots_.Own(session.id, *owner);
    if (!refusal.empty()) return gate_.refusal(Status(Code::kResourceExhausted, refusal));
  }
  if (body_bytes == 0) return std::nullopt;
  if (body_bytes > limits_.max_body_bytes) {  // an upload (BodyLimit let it pass)
    if (uploads_.count(*owner) > 0) {
      return gate_.refusal(Status(Code::kResourceExhausted,
                                  "an upload of yours is being read: send the next one when it "
                                  "is answered"));
    }
    if (uploads_.size() >= limits_.max_uploads) {
      return gate_.refusal(Status(Code::kResourceExhausted,
                                  "the master is reading too many uploads at once: try again in "
                                  "a moment"));
    }
    uploads_.insert(*owner);
    session.upload = true;
    session.body_owner = *owner;
    return std::nullopt;
  }
  size_t& user_bytes = user_bodies_[*owner];
  if (bodies_bytes_ + body_bytes > limits_.max_bodies_bytes ||
      user_bytes + body_bytes > limits_.max_user_bodies_bytes) {
    if (user_bytes == 0) user_bodies_.erase(*owner);
    return gate_.refusal(
        Status(Code::kResourceExhausted,
               bodies_bytes_ + body_bytes > limits_.max_bodies_bytes
                   ? "the master is reading too many request bodies at once: try again in a moment"
                   : "too many of your request bodies are being read at once (at most " +
                         std::to_string(limits_.max_user_bodies_bytes >> 20) +
                         " MiB): try again when "
                         "one is answered"));
  }
  user_bytes += body_bytes;
  bodies_bytes_ += body_bytes;
  session.body_reserved = body_bytes;
  session.body_owner = *owner;
  return std::nullopt;
}

size_t HttpServer::BodyLimit(const HttpRequest& head) const {
  return gate_.is_upload && gate_.is_upload(head) ? limits_.max_upload_bytes
                                                  : limits_.max_body_bytes;
}

void HttpServer::BodyDone(SessionBase& session) {
  if (session.upload) {
    uploads_.erase(session.body_owner);
    session.upload = false;
  }
  if (session.body_reserved == 0) return;
  bodies_bytes_ -= session.body_reserved;
  if (auto it = user_bodies_.find(session.body_owner); it != user_bodies_.end()) {
    it->second -= session.body_reserved;
    if (it->second == 0) user_bodies_.erase(it);
  }
  session.body_reserved = 0;
}

void HttpServer::Sweep() {
  const int64_t now = clock_.NowMs();
  std::vector<std::shared_ptr<SessionBase>> ending;
  for (PeerSlots::Id id : slots_.AnonymousSince(now - limits_.anonymous_timeout_ms)) {
    if (auto it = sessions_.find(id); it != sessions_.end()) ending.push_back(it->second);
  }
  for (const auto& [id, s] : sessions_) {
    const int64_t in_phase = now - s->phase_since_ms;
    using Phase = SessionBase::Phase;
    if ((s->phase == Phase::kHead && !s->owner.empty() && in_phase >= limits_.idle_timeout_ms) ||
        (s->phase == Phase::kBody &&
         in_phase >= (s->upload ? limits_.upload_timeout_ms : limits_.request_timeout_ms)) ||
        (s->phase == Phase::kLinger && in_phase >= kLingerMs)) {
      ending.push_back(s);
    }
  }
  for (const auto& s : ending) s->Close();
  sweep_timer_.WaitMs(limits_.sweep_ms, [this](bool expired) {
    if (expired && !stopped_) Sweep();
  });
}

void HttpServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  sweep_timer_.Cancel();
  std::vector<std::shared_ptr<SessionBase>> sessions;
  for (const auto& [id, s] : sessions_) sessions.push_back(s);
  for (const auto& s : sessions) s->Close();
  sessions_.clear();
  slots_.Clear();
  bodies_bytes_ = 0;
  user_bodies_.clear();
  uploads_.clear();
}

}  // namespace snn
