#include "tests/test_util/http_client.h"

// clang-format off
#include "common/rpc/asio.h"
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on

#include <sys/socket.h>

#include <cctype>
#include <mutex>
#include <thread>

#include "common/rpc/tls.h"

namespace snn::testing {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;

template <typename Stream>
Result<HttpResult> Exchange(Stream& stream, const std::string& host, const HttpCall& call) {
  http::request<http::string_body> request(http::string_to_verb(call.method), call.target, 11);
  request.set(http::field::host, host);
  if (!call.token.empty()) request.set(http::field::authorization, "Bearer " + call.token);
  for (const auto& [name, value] : call.headers) request.set(name, value);
  request.body() = call.body;
  request.prepare_payload();
  request.keep_alive(false);
  boost::system::error_code ec;
  http::write(stream, request, ec);
  if (ec) return Unavailable("writing the request: " + ec.message());
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response, ec);
  if (ec) return Unavailable("reading the answer: " + ec.message());
  HttpResult out;
  out.status = static_cast<int>(response.result_int());
  for (const auto& field : response) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = std::string(field.value());
  }
  out.body = std::move(response.body());
  return out;
}

}  // namespace

Result<HttpResult> HttpDo(const std::string& host, uint16_t port, const std::string& ca_file,
                          const HttpCall& call) {
  asio::io_context io;
  tcp::socket socket(io);
  boost::system::error_code ec;
  socket.connect(tcp::endpoint(asio::ip::make_address(host), port), ec);
  if (ec) return Unavailable("connecting to " + host + ": " + ec.message());
  if (ca_file.empty()) return Exchange(socket, host, call);
  auto tls = MakeClientTls({ca_file, "", ""});
  if (!tls.ok()) return tls.status();
  TlsStream stream(std::move(socket), **tls);
  ExpectPeerHost(stream, host);
  stream.handshake(ssl::stream_base::client, ec);
  if (ec) return Unavailable("TLS handshake: " + ec.message());
  return Exchange(stream, host, call);
}

struct HttpEventStream::State {
  asio::io_context io;
  std::unique_ptr<tcp::socket> plain;
  std::unique_ptr<TlsStream> tls;
  std::thread reader;
  mutable std::mutex mu;
  std::string text;
  bool ended = false;
  int fd = -1;
};

Result<std::unique_ptr<HttpEventStream>> HttpEventStream::Open(const std::string& host,
                                                               uint16_t port,
                                                               const std::string& ca_file,
                                                               const HttpCall& call) {
  auto state = std::make_shared<State>();
  tcp::socket socket(state->io);
  boost::system::error_code ec;
  socket.connect(tcp::endpoint(asio::ip::make_address(host), port), ec);
  if (ec) return Unavailable("connecting to " + host + ": " + ec.message());
  state->fd = socket.native_handle();
  std::string head = call.method + " " + call.target + " HTTP/1.1\r\nHost: " + host + "\r\n";
  if (!call.token.empty()) head += "Authorization: Bearer " + call.token + "\r\n";
  for (const auto& [name, value] : call.headers) head += name + ": " + value + "\r\n";
  head += "\r\n";
  if (!ca_file.empty()) {
    auto tls = MakeClientTls({ca_file, "", ""});
    if (!tls.ok()) return tls.status();
    state->tls = std::make_unique<TlsStream>(std::move(socket), **tls);
    ExpectPeerHost(*state->tls, host);
    state->tls->handshake(ssl::stream_base::client, ec);
    if (ec) return Unavailable("TLS handshake: " + ec.message());
    asio::write(*state->tls, asio::buffer(head), ec);
  } else {
    state->plain = std::make_unique<tcp::socket>(std::move(socket));
    asio::write(*state->plain, asio::buffer(head), ec);
  }
  if (ec) return Unavailable("writing the request: " + ec.message());
  state->reader = std::thread([s = state.get()] {
    char buffer[4096];
    for (;;) {
      boost::system::error_code read_ec;
      const size_t n = s->tls ? s->tls->read_some(asio::buffer(buffer), read_ec)
                              : s->plain->read_some(asio::buffer(buffer), read_ec);
      std::lock_guard<std::mutex> lock(s->mu);
      if (read_ec) {
        s->ended = true;
        return;
      }
      s->text.append(buffer, n);
    }
  });
  return std::unique_ptr<HttpEventStream>(new HttpEventStream(std::move(state)));
}

HttpEventStream::~HttpEventStream() {
  ::shutdown(state_->fd, SHUT_RDWR);  // ends the reader's blocking read
  if (state_->reader.joinable()) state_->reader.join();
}

std::string HttpEventStream::text() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->text;
}

bool HttpEventStream::ended() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->ended;
}

}  // namespace snn::testing
