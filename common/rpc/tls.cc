#include "common/rpc/tls.h"

#include <arpa/inet.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstdlib>

#include "common/identity/pki.h"

namespace snn {
namespace {

std::string Entry(X509_NAME* name, int nid) {
  const int i = X509_NAME_get_index_by_NID(name, nid, -1);
  if (i < 0) return "";
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                     static_cast<size_t>(ASN1_STRING_length(data)));
}

Result<std::shared_ptr<ssl::context>> MakeContext(ssl::context::method method,
                                                  const TlsFiles& files, bool need_cert) {
  auto ctx = std::make_shared<ssl::context>(method);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_3_VERSION);
  // Idle connections (most of a master's) give their read and write buffers back.
  SSL_CTX_set_mode(ctx->native_handle(), SSL_MODE_RELEASE_BUFFERS);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
  boost::system::error_code ec;
  if (files.ca_file.empty()) return InvalidArgument("TLS needs the cluster's CA certificate");
  ctx->load_verify_file(files.ca_file, ec);
  if (ec) return InvalidArgument("cannot read the CA certificate " + files.ca_file);
  if (need_cert || !files.cert_file.empty()) {
    ctx->use_certificate_chain_file(files.cert_file, ec);
    if (ec) return InvalidArgument("cannot read the certificate " + files.cert_file);
    ctx->use_private_key_file(files.key_file, ssl::context::pem, ec);
    if (ec) return InvalidArgument("cannot read the private key " + files.key_file);
    if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
      return InvalidArgument("the key " + files.key_file + " does not match " + files.cert_file);
    }
  }
  return ctx;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> MakeServerTls(const TlsFiles& files) {
  auto ctx = MakeContext(ssl::context::tls_server, files, true);
  if (!ctx.ok()) return ctx.status();
  // A client certificate is checked when offered (agents); users come without one.
  (*ctx)->set_verify_mode(ssl::verify_peer);
  return ctx;
}

Result<std::shared_ptr<ssl::context>> MakeClientTls(const TlsFiles& files) {
  auto ctx = MakeContext(ssl::context::tls_client, files, false);
  if (!ctx.ok()) return ctx.status();
  (*ctx)->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  return ctx;
}

void ExpectPeerHost(TlsStream& stream, const std::string& host) {
  X509_VERIFY_PARAM* param = SSL_get0_param(stream.native_handle());
  in6_addr ip6;
  in_addr ip4;
  const bool ip =
      inet_pton(AF_INET, host.c_str(), &ip4) == 1 || inet_pton(AF_INET6, host.c_str(), &ip6) == 1;
  if (ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
  }
}

std::string CertificateRefusal(TlsStream& stream, const std::string& host) {
  const long result = SSL_get_verify_result(stream.native_handle());
  switch (result) {
    case X509_V_OK:
      return "";
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return "the master's certificate does not name '" + host +
             "', the address it was reached at (a copy of the master's key elsewhere, or a "
             "certificate made without it: snn-ca master DIR --host lists every name and address "
             "the master is reached by)";
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "the master's certificate has expired (snn-ca master DIR makes a new one)";
    default:
      return std::string("the master's certificate was refused: ") +
             X509_verify_cert_error_string(result) +
             " (is the CA file this cluster's, and is the server an snn master?)";
  }
}

PeerCertificate PeerOf(TlsStream& stream) {
  PeerCertificate peer;
  SSL* ssl = stream.native_handle();
  if (SSL_get_verify_result(ssl) != X509_V_OK) return peer;
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (cert == nullptr) return peer;
  X509_NAME* subject = X509_get_subject_name(cert);
  peer.name = Entry(subject, NID_commonName);
  peer.role = Entry(subject, NID_organizationalUnitName);
  const std::string generation = Entry(subject, NID_generationQualifier);
  peer.generation = generation.empty() ? 0 : std::strtoull(generation.c_str(), nullptr, 10);
  const pki::CertInfo info = pki::CertInfoOf(cert);
  peer.serial = info.serial_hex;
  peer.not_before_s = info.not_before_s;
  peer.not_after_s = info.not_after_s;
  X509_free(cert);
  return peer;
}

}  // namespace snn
