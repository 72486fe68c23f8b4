// The node's TLS identity, in its TLS directory: the cluster's CA (ca.crt, put there by the
// operator), and the node's certificate and key together in node.pem (mode 0600, replaced in
// one rename, so a crash never leaves a certificate beside the wrong key). A node without a
// certificate enrols once with a join token: it makes a key and a certificate request, and
// installs the certificate the master signs for it. It asks for a new one (with a new key) once
// two thirds of the certificate's lifetime have passed.
// Thread contract: the agent's io thread.
#pragma once

#include <memory>
#include <string>

#include "common/base/status.h"
#include "common/rpc/tls.h"

namespace snn {

class NodeCredentials {
 public:
  // `join_token_file`, when given, is read at each join_token() call (a new token placed there
  // is used without a restart).
  NodeCredentials(std::string tls_dir, std::string join_token, std::string join_token_file = "")
      : dir_(std::move(tls_dir)),
        join_token_(std::move(join_token)),
        join_token_file_(std::move(join_token_file)) {}

  bool has_certificate() const;
  // The join token: the file's content (trimmed), or the one given; "" when there is none.
  std::string join_token() const;
  // The certificate was revoked: it is moved aside (node.pem.revoked), so that the next
  // connection enrols with a join token rather than present it again.
  Status SetAside();
  // A client context: the CA, and the node's certificate when it has one.
  Result<std::shared_ptr<ssl::context>> Context() const;

  // A new key (kept until Install) and a request for a certificate naming `node`.
  Result<std::string> NewRequest(const std::string& node);
  // Saves the pending key and `cert_pem` (which must be for that key and signed by the CA).
  Status Install(const std::string& cert_pem);
  // Whether the installed certificate is past two thirds of its life at `now_s`.
  bool RenewDue(int64_t now_s) const;

  std::string ca_path() const { return dir_ + "/ca.crt"; }
  std::string pem_path() const { return dir_ + "/node.pem"; }

 private:
  const std::string dir_;
  const std::string join_token_;
  const std::string join_token_file_;
  std::string pending_key_;
};

}  // namespace snn
