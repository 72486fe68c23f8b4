#include "nodeagent/node_credentials.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/base/file_util.h"
#include "common/identity/pki.h"

namespace snn {

std::string NodeCredentials::join_token() const {
  if (join_token_file_.empty()) return join_token_;
  auto token = ReadWholeFile(join_token_file_, "the join token file");
  if (!token.ok()) return "";
  std::string out = *token;
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

Status NodeCredentials::SetAside() {
  if (std::rename(pem_path().c_str(), (pem_path() + ".revoked").c_str()) != 0) {
    return Unavailable("cannot move " + pem_path() + " aside: " + std::strerror(errno));
  }
  return Status::Ok();
}

bool NodeCredentials::has_certificate() const {
  std::error_code ec;
  return std::filesystem::exists(pem_path(), ec);
}

Result<std::shared_ptr<ssl::context>> NodeCredentials::Context() const {
  TlsFiles files;
  files.ca_file = ca_path();
  if (has_certificate()) {
    files.cert_file = pem_path();
    files.key_file = pem_path();
  }
  return MakeClientTls(files);
}

Result<std::string> NodeCredentials::NewRequest(const std::string& node) {
  auto key = pki::NewPrivateKey();
  if (!key.ok()) return key.status();
  auto csr = pki::NewCsr(*key, node);
  if (!csr.ok()) return csr.status();
  pending_key_ = *key;
  return *csr;
}

Status NodeCredentials::Install(const std::string& cert_pem) {
  if (pending_key_.empty()) return FailedPrecondition("no certificate request is pending");
  auto ca = ReadWholeFile(ca_path(), "the CA certificate");
  if (!ca.ok()) return ca.status();
  SNN_RETURN_IF_ERROR(pki::VerifyCert(*ca, cert_pem));
  SNN_RETURN_IF_ERROR(WriteFileAtomic(pem_path(), cert_pem + pending_key_, 0600));
  pending_key_.clear();
  return Status::Ok();
}

bool NodeCredentials::RenewDue(int64_t now_s) const {
  auto pem = ReadWholeFile(pem_path(), "the node certificate");
  if (!pem.ok()) return false;
  auto info = pki::ReadCert(*pem);
  if (!info.ok()) return false;
  const int64_t life = info->not_after_s - info->not_before_s;
  return now_s >= info->not_after_s - life / 3;
}

}  // namespace snn
