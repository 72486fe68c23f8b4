#include "tests/test_util/http_client.h"

// clang-format off
#include "common/rpc/asio.h"
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on

#include <cctype>

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

}  // namespace snn::testing
