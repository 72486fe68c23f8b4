// TLS 1.3 for every link to the master (Boost.Asio SSL over OpenSSL 3). The master presents its
// certificate and checks a client certificate when one is offered (agents); agents present
// theirs; snnctl presents none (its user is proven by MUNGE) but checks the master's.
// Peers are judged by the CA that signed them and by the role in their certificate, so a node's
// certificate cannot pose as the master.
#pragma once

#include <memory>
#include <string>

#include "common/rpc/asio.h"
// clang-format off
#include <boost/asio/ssl.hpp>
// clang-format on
#include "common/base/status.h"

namespace snn {

namespace ssl = boost::asio::ssl;
using TlsStream = ssl::stream<tcp::socket>;

struct TlsFiles {
  std::string ca_file;    // the cluster's CA certificate
  std::string cert_file;  // this side's certificate (optional for a client)
  std::string key_file;
};

// Both: TLS 1.3 only, peers verified against the CA.
Result<std::shared_ptr<ssl::context>> MakeServerTls(const TlsFiles& files);
Result<std::shared_ptr<ssl::context>> MakeClientTls(const TlsFiles& files);

// What a verified certificate says of its holder; empty when the peer showed none.
struct PeerCertificate {
  std::string name;         // common name: the node's name, or the master's
  std::string role;         // organizational unit: "master" or "node"
  uint64_t generation = 0;  // a node's certificate generation (see NodeApproval)
  std::string serial;       // hex
  int64_t not_before_s = 0, not_after_s = 0;
};
PeerCertificate PeerOf(TlsStream& stream);

// A client, before its handshake: the server's certificate must name `host` (a DNS name or an IP
// address, as the client was told to reach it) among its alternative names, or the handshake
// fails, as HTTPS clients do. Checked by OpenSSL along with the chain.
void ExpectPeerHost(TlsStream& stream, const std::string& host);
// After a failed handshake: why the server's certificate was refused, in words for the user
// ("" when no certificate was refused, e.g. the connection was closed).
std::string CertificateRefusal(TlsStream& stream, const std::string& host);

// Runs `fn` with the stream a connection's bytes travel on: `tls` when there is one, else the
// plain socket.
template <typename Fn>
void WithStream(const std::unique_ptr<TlsStream>& tls, tcp::socket& plain, Fn&& fn) {
  if (tls) {
    fn(*tls);
  } else {
    fn(plain);
  }
}

}  // namespace snn
