#include "common/identity/pki.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <ctime>
#include <memory>

namespace snn::pki {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using PKey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Req = std::unique_ptr<X509_REQ, Deleter<X509_REQ, X509_REQ_free>>;
using Name = std::unique_ptr<X509_NAME, Deleter<X509_NAME, X509_NAME_free>>;

// The last OpenSSL error, as one line.
Status SslError(const std::string& what) {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  char buf[256] = "unknown error";
  if (e != 0) ERR_error_string_n(e, buf, sizeof buf);
  return InvalidArgument(what + ": " + buf);
}

Bio ReadBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

Result<PKey> ParseKey(const std::string& pem) {
  Bio bio = ReadBio(pem);
  PKey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return SslError("not a PEM private key");
  return key;
}

Result<Cert> ParseCert(const std::string& pem) {
  Bio bio = ReadBio(pem);
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return SslError("not a PEM certificate");
  return cert;
}

std::string CertPem(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  return BioText(bio.get());
}

std::string KeyPem(EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  return BioText(bio.get());
}

Name SubjectName(const std::string& common_name, const std::string& role, uint64_t generation = 0) {
  Name name(X509_NAME_new());
  X509_NAME_add_entry_by_txt(name.get(), "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("snn"), -1, -1, 0);
  if (!role.empty()) {
    X509_NAME_add_entry_by_txt(name.get(), "OU", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(role.c_str()), -1, -1, 0);
  }
  X509_NAME_add_entry_by_txt(name.get(), "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  if (generation > 0) {  // which generation of the node's certificates (snnctl node revoke)
    const std::string g = std::to_string(generation);
    X509_NAME_add_entry_by_NID(name.get(), NID_generationQualifier, MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(g.c_str()), -1, -1, 0);
  }
  return name;
}

std::string NameEntry(const X509_NAME* name, int nid) {
  const int i = X509_NAME_get_index_by_NID(name, nid, -1);
  if (i < 0) return "";
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                     static_cast<size_t>(ASN1_STRING_length(data)));
}

Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return SslError("bad certificate extension '" + value + "'");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return Status::Ok();
}

// A certificate for `key`'s public half, not yet signed: random serial, valid from a little
// before now (clock skew: a minute, or a tenth of a short lifetime) to `validity_s` from now.
Result<Cert> NewCert(EVP_PKEY* public_key, const Name& subject, int64_t validity_s) {
  if (validity_s < 10) return InvalidArgument("a certificate must be valid for at least 10 s");
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> serial(BN_new());
  BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
  BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -std::min<long>(60, validity_s / 10));
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(validity_s));
  X509_set_subject_name(cert.get(), subject.get());
  X509_set_pubkey(cert.get(), public_key);
  return cert;
}

int64_t ToUnix(const ASN1_TIME* t) {
  struct tm tm {};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return 0;
  return static_cast<int64_t>(timegm(&tm));
}

}  // namespace

Result<std::string> NewPrivateKey() {
  PKey key(EVP_EC_gen("P-256"));
  if (!key) return SslError("cannot generate a key");
  return KeyPem(key.get());
}

Result<std::string> NewCsr(const std::string& key_pem, const std::string& common_name) {
  auto key = ParseKey(key_pem);
  if (!key.ok()) return key.status();
  Req req(X509_REQ_new());
  X509_REQ_set_version(req.get(), 0);
  Name subject = SubjectName(common_name, "");
  X509_REQ_set_subject_name(req.get(), subject.get());
  X509_REQ_set_pubkey(req.get(), key->get());
  if (X509_REQ_sign(req.get(), key->get(), EVP_sha256()) <= 0) return SslError("cannot sign");
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509_REQ(bio.get(), req.get());
  return BioText(bio.get());
}

Result<KeyAndCert> NewCa(const std::string& name, int64_t validity_s) {
  PKey key(EVP_EC_gen("P-256"));
  if (!key) return SslError("cannot generate a key");
  auto cert = NewCert(key.get(), SubjectName(name, kRoleCa), validity_s);
  if (!cert.ok()) return cert.status();
  X509* c = cert->get();
  X509_set_issuer_name(c, X509_get_subject_name(c));
  SNN_RETURN_IF_ERROR(AddExtension(c, c, NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
  SNN_RETURN_IF_ERROR(AddExtension(c, c, NID_key_usage, "critical,keyCertSign,cRLSign"));
  SNN_RETURN_IF_ERROR(AddExtension(c, c, NID_subject_key_identifier, "hash"));
  if (X509_sign(c, key.get(), EVP_sha256()) <= 0) return SslError("cannot sign the CA");
  return KeyAndCert{KeyPem(key.get()), CertPem(c)};
}

Result<std::string> SignCsr(const KeyAndCert& ca, const std::string& csr_pem, const Issue& issue) {
  if (issue.role != kRoleMaster && issue.role != kRoleNode) {
    return InvalidArgument("a certificate's role is master or node");
  }
  if (issue.common_name.empty() || issue.common_name.size() > 64) {
    return InvalidArgument("a certificate's name must be 1 to 64 characters");
  }
  auto ca_key = ParseKey(ca.key_pem);
  if (!ca_key.ok()) return Status(ca_key.status().code(), "CA key: " + ca_key.status().message());
  auto ca_cert = ParseCert(ca.cert_pem);
  if (!ca_cert.ok()) return ca_cert.status();
  Bio bio = ReadBio(csr_pem);
  Req req(PEM_read_bio_X509_REQ(bio.get(), nullptr, nullptr, nullptr));
  if (!req) return SslError("not a PEM certificate request");
  EVP_PKEY* public_key = X509_REQ_get0_pubkey(req.get());
  if (public_key == nullptr || X509_REQ_verify(req.get(), public_key) != 1) {
    return SslError("the certificate request's signature does not verify");
  }
  auto cert = NewCert(public_key, SubjectName(issue.common_name, issue.role, issue.generation),
                      issue.validity_s);
  if (!cert.ok()) return cert.status();
  X509* c = cert->get();
  X509_set_issuer_name(c, X509_get_subject_name(ca_cert->get()));
  SNN_RETURN_IF_ERROR(AddExtension(c, ca_cert->get(), NID_basic_constraints, "critical,CA:FALSE"));
  SNN_RETURN_IF_ERROR(
      AddExtension(c, ca_cert->get(), NID_key_usage, "critical,digitalSignature,keyAgreement"));
  SNN_RETURN_IF_ERROR(
      AddExtension(c, ca_cert->get(), NID_ext_key_usage,
                   // A master serves, and in an HA group also calls the leader (ha.snapshot).
                   issue.role == kRoleMaster ? "serverAuth,clientAuth" : "clientAuth"));
  SNN_RETURN_IF_ERROR(AddExtension(c, ca_cert->get(), NID_authority_key_identifier, "keyid"));
  std::string alt;
  for (const auto& n : issue.alt_names) {
    in_addr ip4;
    in6_addr ip6;
    const bool ip =
        inet_pton(AF_INET, n.c_str(), &ip4) == 1 || inet_pton(AF_INET6, n.c_str(), &ip6) == 1;
    alt += (alt.empty() ? "" : ",") + std::string(ip ? "IP:" : "DNS:") + n;
  }
  if (!alt.empty()) {
    SNN_RETURN_IF_ERROR(AddExtension(c, ca_cert->get(), NID_subject_alt_name, alt));
  }
  if (X509_sign(c, ca_key->get(), EVP_sha256()) <= 0) return SslError("cannot sign");
  return CertPem(c);
}

Result<KeyAndCert> IssueWithNewKey(const KeyAndCert& ca, const Issue& issue) {
  auto key = NewPrivateKey();
  if (!key.ok()) return key.status();
  auto csr = NewCsr(*key, issue.common_name);
  if (!csr.ok()) return csr.status();
  auto cert = SignCsr(ca, *csr, issue);
  if (!cert.ok()) return cert.status();
  return KeyAndCert{*key, *cert};
}

CertInfo CertInfoOf(const X509* cert) {
  CertInfo info;
  const X509_NAME* subject = X509_get_subject_name(cert);
  info.common_name = NameEntry(subject, NID_commonName);
  info.role = NameEntry(subject, NID_organizationalUnitName);
  info.not_before_s = ToUnix(X509_get0_notBefore(cert));
  info.not_after_s = ToUnix(X509_get0_notAfter(cert));
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> serial(
      ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  if (serial) {
    char* hex = BN_bn2hex(serial.get());
    info.serial_hex = hex;
    OPENSSL_free(hex);
  }
  return info;
}

Result<CertInfo> ReadCert(const std::string& cert_pem) {
  auto cert = ParseCert(cert_pem);
  if (!cert.ok()) return cert.status();
  return CertInfoOf(cert->get());
}

Status VerifyCert(const std::string& ca_cert_pem, const std::string& cert_pem) {
  auto ca = ParseCert(ca_cert_pem);
  if (!ca.ok()) return ca.status();
  auto cert = ParseCert(cert_pem);
  if (!cert.ok()) return cert.status();
  std::unique_ptr<X509_STORE, Deleter<X509_STORE, X509_STORE_free>> store(X509_STORE_new());
  X509_STORE_add_cert(store.get(), ca->get());
  std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX, X509_STORE_CTX_free>> ctx(
      X509_STORE_CTX_new());
  X509_STORE_CTX_init(ctx.get(), store.get(), cert->get(), nullptr);
  if (X509_verify_cert(ctx.get()) != 1) {
    return InvalidArgument(std::string("certificate does not verify: ") +
                           X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get())));
  }
  return Status::Ok();
}

namespace {
std::string Hex(const unsigned char* data, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 15];
  }
  return out;
}
}  // namespace

Result<std::string> RandomHex(size_t bytes) {
  std::vector<unsigned char> secret(bytes);
  if (RAND_bytes(secret.data(), static_cast<int>(secret.size())) != 1) {
    return Internal("OpenSSL has no randomness to give");
  }
  return Hex(secret.data(), secret.size());
}

std::string Sha256Hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  return Hex(digest, length);
}

}  // namespace snn::pki
