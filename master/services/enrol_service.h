// Node enrolment: an admin creates a one-time join token for a node name (node.token); a new
// node presents it with a certificate request and gets a certificate for that name, signed by
// the cluster's CA (node.enrol); a node renews its certificate before it expires (node.renew),
// for its own name only. Tokens are kept durably as their SHA-256 hashes and used up by the
// enrolment they allow. What a node may declare and whether its certificates still hold is
// master/nodes/node_approvals.h: admins approve an inventory (node.add) and revoke a node's
// certificates (node.revoke); certificates are issued in the node's current generation.
// Thread contract: the master's io thread.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "common/base/clock.h"
#include "common/identity/pki.h"
#include "common/rpc/rpc_router.h"
#include "master/nodes/node_approvals.h"
#include "master/store/journal.h"
#include "proto/node.pb.h"

namespace snn {

struct EnrolOptions {
  std::optional<pki::KeyAndCert> ca;          // absent: enrolment is off (no TLS)
  int64_t node_cert_validity_s = 30 * 86400;  // a node certificate's lifetime
  int64_t default_token_ttl_s = 15 * 60;
  int64_t max_token_ttl_s = 7 * 86400;
};

class EnrolService {
 public:
  // `on_revoked(node)` drops the node's session, if it has one.
  EnrolService(Journal& journal, const Clock& clock, EnrolOptions options, NodeApprovals& approvals,
               std::function<void(const std::string&)> on_revoked)
      : journal_(journal),
        clock_(clock),
        options_(std::move(options)),
        approvals_(approvals),
        on_revoked_(std::move(on_revoked)) {}

  void Register(MethodRouter& router);
  // Before serving: the CA (read from the TLS directory) and lifetimes.
  void set_options(EnrolOptions options) { options_ = std::move(options); }
  // At recovery: a stored token (key without the prefix).
  void Restore(const std::string& hash, v1::JoinTokenRecord token);

  static std::string HashToken(const std::string& token);

 private:
  void Token(const CallContext& ctx, v1::NodeTokenRequest req, Responder<v1::NodeTokenResponse> r);
  void Enrol(const CallContext& ctx, v1::EnrolRequest req, Responder<v1::EnrolResponse> r);
  void Renew(const CallContext& ctx, v1::RenewRequest req, Responder<v1::RenewResponse> r);
  void Add(const CallContext& ctx, v1::NodeAddRequest req, Responder<v1::NodeAddResponse> r);
  // Approves `boards` and `pools` for `node` (checked as a registration would be), in the
  // journal (the caller commits).
  Result<v1::NodeApproval> Approve(const CallContext& ctx, const std::string& node,
                                   const google::protobuf::RepeatedPtrField<v1::BoardInfo>& boards,
                                   const google::protobuf::RepeatedPtrField<std::string>& pools);
  void Revoke(const CallContext& ctx, v1::NodeRevokeRequest req,
              Responder<v1::NodeRevokeResponse> r);
  Result<std::string> Sign(const std::string& node, const std::string& csr_pem);

  Journal& journal_;
  const Clock& clock_;
  EnrolOptions options_;
  NodeApprovals& approvals_;
  std::function<void(const std::string&)> on_revoked_;
  std::map<std::string, v1::JoinTokenRecord> tokens_;  // by hash
};

// 1 to 64 letters, digits, '.', '_' and '-', not starting with '.' or '-'.
Status ValidateNodeName(const std::string& name);

}  // namespace snn
