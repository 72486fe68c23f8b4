// A small HTTP/1.1 server for the master's HTTP API (Boost.Beast over Asio, TLS with the
// master's certificate when the cluster has one). It reads one request at a time per connection
// (bodies up to 1 MiB, headers up to 16 KiB), hands it to the handler, and writes the answer the
// handler gives, now or later (a long poll, a durable commit); a handler may instead open an
// event stream (text/event-stream) and push to it. Connections waiting for a request longer than
// the idle limit are closed (measured on the injected clock); beyond max_connections, or
// max_per_address from one IP address, new ones are refused.
// Thread contract: everything on the io thread it is given.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "common/base/clock.h"
#include "common/base/status.h"
#include "common/rpc/address.h"
#include "common/rpc/clock_timer.h"
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
  size_t max_connections = 4096;
  size_t max_per_address = 1024;  // from one IP address: no client takes every connection
  size_t max_body_bytes = 1 << 20;
  int64_t idle_timeout_ms = 60000;  // waiting for (the rest of) a request
  int64_t sweep_ms = 1000;
};

class HttpServer {
 public:
  using Handler = std::function<void(HttpRequest, std::shared_ptr<HttpReply>)>;

  // `tls` null: plain HTTP (only with --auth=none, on loopback).
  HttpServer(asio::io_context& io, const Clock& clock, Handler handler,
             std::shared_ptr<ssl::context> tls, HttpLimits limits = {});
  ~HttpServer();

  Status Listen(const HostPort& address);
  uint16_t port() const { return port_; }
  void Stop();
  size_t connection_count() const { return sessions_.size(); }

  // For sessions (internal).
  struct SessionBase;

 private:
  void Accept();
  void Sweep();

  asio::io_context& io_;
  const Clock& clock_;
  Handler handler_;
  std::shared_ptr<ssl::context> tls_;
  const HttpLimits limits_;
  tcp::acceptor acceptor_;
  ClockTimer sweep_timer_;
  uint16_t port_ = 0;
  bool stopped_ = false;
  std::unordered_map<SessionBase*, std::shared_ptr<SessionBase>> sessions_;
  std::unordered_map<std::string, size_t> per_address_;
};

}  // namespace snn
