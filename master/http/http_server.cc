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
  std::string address;        // the peer's IP address
  int64_t idle_since_ms = 0;  // waiting for a request since then
  bool reading = false;       // between requests or inside one (not handling, not streaming)
};

namespace {

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
  Session(Stream stream, const Clock& clock, const HttpServer::Handler& handler,
          const HttpLimits& limits, std::function<void(Session*)> on_gone)
      : stream_(std::move(stream)),
        clock_(clock),
        handler_(handler),
        limits_(limits),
        on_gone_(std::move(on_gone)) {
    boost::system::error_code ec;
    auto endpoint = Lowest(stream_).remote_endpoint(ec);
    if (!ec) peer_ = endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  }

  void Start() override {
    idle_since_ms = clock_.NowMs();
    reading = true;
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

  void Respond(HttpResponse response, bool keep_alive) {
    std::string head = StatusLine(response.status);
    head += "Content-Type: " + response.content_type + "\r\n";
    head += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
    head += "Cache-Control: no-cache\r\n";
    head += "X-Content-Type-Options: nosniff\r\n";
    for (const auto& [name, value] : response.headers) head += name + ": " + value + "\r\n";
    if (!keep_alive) head += "Connection: close\r\n";
    head += "\r\n";
    Write(head + response.body, [self = this->shared_from_this(), keep_alive] {
      if (!keep_alive) return self->Close();
      self->idle_since_ms = self->clock_.NowMs();
      self->reading = true;
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
  void Read() {
    if (closed_) return;
    parser_.emplace();
    parser_->body_limit(limits_.max_body_bytes);
    parser_->header_limit(16 * 1024);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](boost::system::error_code ec, size_t) {
                       self->OnRead(ec);
                     });
  }

  void OnRead(boost::system::error_code ec);
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

  struct Out {
    std::string bytes;
    std::function<void()> then;
  };
  Stream stream_;
  const Clock& clock_;
  const HttpServer::Handler& handler_;
  const HttpLimits& limits_;
  std::function<void(Session*)> on_gone_;
  std::string peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
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
void Session<Stream>::OnRead(boost::system::error_code ec) {
  reading = false;
  if (ec) {
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
      HttpResponse tooBig{413,
                          "application/json",
                          "{\"error\":\"the request is too large (body at most " +
                              std::to_string(limits_.max_body_bytes) +
                              " bytes, headers 16 KiB)\",\"code\":\"INVALID_ARGUMENT\"}\n",
                          {}};
      return Respond(std::move(tooBig), false);
    }
    if (ec != http::error::end_of_stream && ec != asio::error::operation_aborted &&
        ec != asio::error::eof && ec != ssl::error::stream_truncated) {
      // Bad syntax: one line back, then the connection ends.
      HttpResponse bad{400,
                       "application/json",
                       "{\"error\":\"malformed HTTP request: " + ec.message() +
                           "\",\"code\":\"INVALID_ARGUMENT\"}\n",
                       {}};
      return Respond(std::move(bad), false);
    }
    return Close();
  }
  auto message = parser_->release();
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request.headers[name] = std::string(field.value());
  }
  request.body = std::move(message.body());
  request.peer = peer_;
  handler_(std::move(request),
           std::make_shared<Reply<Stream>>(this->shared_from_this(), message.keep_alive()));
}

}  // namespace

HttpServer::HttpServer(asio::io_context& io, const Clock& clock, Handler handler,
                       std::shared_ptr<ssl::context> tls, HttpLimits limits)
    : io_(io),
      clock_(clock),
      handler_(std::move(handler)),
      tls_(std::move(tls)),
      limits_(limits),
      acceptor_(io),
      sweep_timer_(io, clock) {}

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
    boost::system::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    const std::string address = peer_ec ? std::string() : peer.address().to_string();
    if (sessions_.size() >= limits_.max_connections ||
        per_address_[address] >= limits_.max_per_address) {
      boost::system::error_code ignored;
      socket.close(ignored);
    } else {
      auto gone = [this](SessionBase* s) {
        auto it = sessions_.find(s);
        if (it == sessions_.end()) return;
        // Destroyed after the current handler returns: the session may be mid-call.
        asio::post(io_, [keep = it->second] {});
        if (--per_address_[s->address] == 0) per_address_.erase(s->address);
        sessions_.erase(it);
      };
      std::shared_ptr<SessionBase> session;
      if (tls_) {
        session = std::make_shared<Session<TlsStream>>(TlsStream(std::move(socket), *tls_), clock_,
                                                       handler_, limits_, gone);
      } else {
        session = std::make_shared<Session<tcp::socket>>(std::move(socket), clock_, handler_,
                                                         limits_, gone);
      }
      session->address = address;
      ++per_address_[address];
      sessions_.emplace(session.get(), session);
      session->Start();
    }
    Accept();
  });
}

void HttpServer::Sweep() {
  const int64_t now = clock_.NowMs();
  std::vector<std::shared_ptr<SessionBase>> idle;
  for (const auto& [raw, s] : sessions_) {
    if (s->reading && now - s->idle_since_ms >= limits_.idle_timeout_ms) idle.push_back(s);
  }
  for (const auto& s : idle) s->Close();
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
  for (const auto& [raw, s] : sessions_) sessions.push_back(s);
  for (const auto& s : sessions) s->Close();
  sessions_.clear();
  per_address_.clear();
}

}  // namespace snn
