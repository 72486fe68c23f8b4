// A small HTTP/1.1 server for the master's HTTP API (Boost.Beast over Asio, TLS with the
// master's certificate when the cluster has one). It reads one request at a time per connection:
// first its head (at most 16 KiB), which the gate judges, and only then its body (at most 1 MiB),
// so a request without a valid token never costs the server its body. An upload (a request the
// gate calls one: a job with its model) may carry up to `max_upload_bytes`, with its length
// given; a user reads one at a time, `max_uploads` in all, kept apart from the other bodies'
// budgets, its body given `upload_timeout_ms`. It hands the request to
// the handler and writes the answer the handler gives, now or later (a long poll, a durable
// commit); a handler may instead open an event stream (text/event-stream) and push to it.
//
// Who holds the connections is kept as on the RPC port (common/rpc/peer_slots.h): a connection is
// anonymous until a request on it carries a token the gate accepts, then it is its user's. One
// address has at most `max_anonymous_per_address` anonymous connections (one more closes the
// oldest), each closed `anonymous_timeout_ms` after it opened; one user has at most
// `max_per_user` at one address (more are refused, with that reason, and hurt only that user);
// `max_connections` in all, an address with fewer than `always_admit` open still getting in.
// Bodies being read are bounded in all and per user. Times are on the injected clock.
// Thread contract: everything on the io thread it is given.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "common/base/clock.h"
#include "common/base/status.h"
#include "common/rpc/address.h"
#include "common/rpc/clock_timer.h"
#include "common/rpc/peer_slots.h"
#include "common/rpc/tls.h"

namespace snn {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string target;                          // path and query, as sent
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::string peer;  // "127.0.0.1:41234"

  // A header's value, or "" (name in lower case).
  std::string Header(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::map<std::string, std::string> headers;  // extra ones (ETag, Location, Retry-After)
};

// An open event stream: the answer's header is sent; Send writes more of its body. Closed when
// the client goes (closed() turns true and `on_close`, if set, runs once).
class HttpStream {
 public:
  virtual ~HttpStream() = default;
  virtual void Send(std::string chunk) = 0;
  virtual bool closed() const = 0;
  virtual void set_on_close(std::function<void()> on_close) = 0;
  // Bytes written to the socket's buffers not yet taken by the client.
  virtual size_t backlog_bytes() const = 0;
  virtual void Close() = 0;
  // Closes once what was sent is written (the stream's last word).
  virtual void End() = 0;
};

class HttpReply {
 public:
  virtual ~HttpReply() = default;
  virtual void Respond(HttpResponse response) = 0;
  // Starts an event stream (200, text/event-stream) instead of one answer.
  virtual std::shared_ptr<HttpStream> OpenStream() = 0;
  // The client hung up before the answer (a long poll may stop waiting).
  virtual bool abandoned() const = 0;
};

struct HttpLimits {
  size_t max_connections = 4096;           // in all
  size_t always_admit = 4;                 // an address with fewer open still gets in
  size_t max_anonymous_per_address = 64;   // without an accepted token; one more closes the oldest
  size_t max_per_user = 64;                // of one user at one address; more are refused
  size_t max_body_bytes = 1 << 20;         // one request's
  size_t max_bodies_bytes = 64 << 20;      // bodies being read at once, in all
  size_t max_user_bodies_bytes = 4 << 20;  // ... of one user
  int64_t anonymous_timeout_ms = 10000;    // a connection with no accepted token, from its start
  int64_t idle_timeout_ms = 60000;         // a user's connection waiting for its next request
  int64_t request_timeout_ms = 30000;      // a body, once its head came
  size_t max_upload_bytes = 64 << 20;      // an upload's body (a token and Content-Length needed)
  size_t max_uploads = 2;                  // uploads being read at once, in all (one per user)
  int64_t upload_timeout_ms = 300000;      // an upload's body, once its head came
  int64_t sweep_ms = 1000;
};

// What the server asks of each request's head before it reads the body.
struct HttpGate {
  // The user the request's credentials prove ("uid 1000"), "" when it carries none, or why the
  // ones it carries are refused (a body is then not read).
  std::function<Result<std::string>(const HttpRequest& head)> owner_of;
  // The answer to a request refused before its body is read.
  std::function<HttpResponse(const Status& why)> refusal;
  // Whether a request is an upload (HttpLimits::max_upload_bytes); null: none is.
  std::function<bool(const HttpRequest& head)> is_upload;
};

class HttpServer {
 public:
  using Handler = std::function<void(HttpRequest, std::shared_ptr<HttpReply>)>;

  // `tls` null: plain HTTP (only with --auth=none, on loopback).
  HttpServer(asio::io_context& io, const Clock& clock, Handler handler, HttpGate gate,
             std::shared_ptr<ssl::context> tls, HttpLimits limits = {});
  ~HttpServer();

  Status Listen(const HostPort& address);
  uint16_t port() const { return port_; }
  void Stop();
  size_t connection_count() const { return sessions_.size(); }

  // For sessions (internal).
  struct SessionBase;
  // A request's head came on `session`: nullopt to read its body (of `body_bytes` at most), or
  // the answer that refuses it (the connection then ends).
  std::optional<HttpResponse> Admit(SessionBase& session, const HttpRequest& head,
                                    size_t body_bytes);
  // The most a request with this head may carry.
  size_t BodyLimit(const HttpRequest& head) const;
  // The body Admit let `session` read is read (or the session ended).
  void BodyDone(SessionBase& session);

 private:
  void Accept();
  void Start(tcp::socket socket);
  void Gone(SessionBase* session);
  void Sweep();

  asio::io_context& io_;
  const Clock& clock_;
  Handler handler_;
  HttpGate gate_;
  std::shared_ptr<ssl::context> tls_;
  const HttpLimits limits_;
  tcp::acceptor acceptor_;
  ClockTimer sweep_timer_;
  uint16_t port_ = 0;
  bool stopped_ = false;
  PeerSlots slots_;
  PeerSlots::Id next_id_ = 1;
  std::unordered_map<PeerSlots::Id, std::shared_ptr<SessionBase>> sessions_;
  size_t bodies_bytes_ = 0;                              // being read, in all
  std::unordered_map<std::string, size_t> user_bodies_;  // ... by user
  std::unordered_set<std::string> uploads_;              // users reading an upload (1 each)
};

}  // namespace snn
