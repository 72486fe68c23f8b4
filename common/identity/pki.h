// The cluster's small public-key infrastructure, over OpenSSL 3: a CA, the master's server
// certificate and the nodes' client certificates. A certificate names its holder in the common
// name and its role ("ca", "master" or "node") in the organizational unit; the master signs a
// node's request with the name the admin's join token gave, whatever the request asked for.
// Keys are EC P-256, signatures SHA-256. Everything is PEM text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/base/status.h"

struct x509_st;  // OpenSSL's X509

namespace snn::pki {

inline constexpr char kRoleCa[] = "ca";
inline constexpr char kRoleMaster[] = "master";
inline constexpr char kRoleNode[] = "node";

struct KeyAndCert {
  std::string key_pem;
  std::string cert_pem;
};

struct CertInfo {
  std::string common_name;
  std::string role;  // the organizational unit
  int64_t not_before_s = 0;
  int64_t not_after_s = 0;  // Unix seconds
  std::string serial_hex;
};
// What a parsed certificate says (a peer's, after a handshake).
CertInfo CertInfoOf(const x509_st* cert);

Result<std::string> NewPrivateKey();
// A certificate signing request for `common_name`, signed by `key_pem`.
Result<std::string> NewCsr(const std::string& key_pem, const std::string& common_name);

// A self-signed CA valid for `validity_s` seconds.
Result<KeyAndCert> NewCa(const std::string& name, int64_t validity_s);

struct Issue {
  std::string common_name;
  std::string role;                    // kRoleMaster or kRoleNode
  int64_t validity_s = 0;              // from now
  std::vector<std::string> alt_names;  // master: IP addresses and DNS names it answers on
  uint64_t generation = 0;  // node: its certificates' generation at the master (0: none given)
};
// Signs the public key of `csr_pem` (whose own signature must verify) with the CA. The subject
// is `issue`'s, never the request's.
Result<std::string> SignCsr(const KeyAndCert& ca, const std::string& csr_pem, const Issue& issue);
// A new key and a certificate for it, signed by the CA (for the master, and for operators who
// hand out node certificates themselves).
Result<KeyAndCert> IssueWithNewKey(const KeyAndCert& ca, const Issue& issue);

Result<CertInfo> ReadCert(const std::string& cert_pem);
// True when `cert_pem` was signed by `ca_cert_pem` and is valid now.
Status VerifyCert(const std::string& ca_cert_pem, const std::string& cert_pem);

// Secrets the cluster hands out (join tokens, access tokens) are random and kept only hashed.
// `bytes` random bytes from OpenSSL's generator, in lowercase hex.
Result<std::string> RandomHex(size_t bytes);
// SHA-256 of `text`, in lowercase hex (64 digits).
std::string Sha256Hex(const std::string& text);

}  // namespace snn::pki
