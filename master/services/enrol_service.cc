#include "master/services/enrol_service.h"

#include <glog/logging.h>

#include <cctype>

#include "common/rpc/service_refusals.h"
#include "master/services/agent_service.h"

namespace snn {

Status ValidateNodeName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '.' || name[0] == '-') {
    return InvalidArgument("a node name is 1 to 64 letters, digits, '.', '_' or '-'");
  }
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return InvalidArgument("a node name is 1 to 64 letters, digits, '.', '_' or '-'");
    }
  }
  return Status::Ok();
}

std::string EnrolService::HashToken(const std::string& token) { return pki::Sha256Hex(token); }

void EnrolService::Register(MethodRouter& router) {
  using namespace std::placeholders;
  router.Add(rpc::kNodeToken, std::bind(&EnrolService::Token, this, _1, _2, _3));
  router.Add(rpc::kNodeEnrol, std::bind(&EnrolService::Enrol, this, _1, _2, _3));
  router.Add(rpc::kNodeRenew, std::bind(&EnrolService::Renew, this, _1, _2, _3));
  router.Add(rpc::kNodeAdd, std::bind(&EnrolService::Add, this, _1, _2, _3));
  router.Add(rpc::kNodeRevoke, std::bind(&EnrolService::Revoke, this, _1, _2, _3));
}

void EnrolService::Restore(const std::string& hash, v1::JoinTokenRecord token) {
  tokens_[hash] = std::move(token);
}

Result<std::string> EnrolService::Sign(const std::string& node, const std::string& csr_pem) {
  if (!options_.ca) {
    return FailedPrecondition("the master runs without TLS (--auth=none): nothing to enrol into");
  }
  if (csr_pem.size() > 16384) return InvalidArgument("the certificate request is too large");
  pki::Issue issue;
  issue.common_name = node;
  issue.role = pki::kRoleNode;
  issue.validity_s = options_.node_cert_validity_s;
  issue.generation = approvals_.Generation(node);
  return pki::SignCsr(*options_.ca, csr_pem, issue);
}

void EnrolService::Token(const CallContext& ctx, v1::NodeTokenRequest req,
                         Responder<v1::NodeTokenResponse> r) {
  if (Status s = ValidateNodeName(req.node()); !s.ok()) return r.Fail(s);
  if (!options_.ca) return r.Fail(FailedPrecondition("the master runs without TLS (--auth=none)"));
  const int64_t ttl_s =
      req.ttl_s() == 0 ? options_.default_token_ttl_s : static_cast<int64_t>(req.ttl_s());
  if (ttl_s < 1 || ttl_s > options_.max_token_ttl_s) {
    return r.Fail(InvalidArgument("a join token lives 1 s to " +
                                  std::to_string(options_.max_token_ttl_s) + " s"));
  }
  auto secret = pki::RandomHex(32);
  if (!secret.ok()) return r.Fail(secret.status());
  const std::string token = "snnjoin." + *secret;
  const std::string hash = HashToken(token);
  const int64_t now = clock_.NowMs();
  // Expired tokens go when a new one is made: the table stays as small as the live tokens.
  for (auto it = tokens_.begin(); it != tokens_.end();) {
    if (it->second.expires_ms() <= now) {
      journal_.DeleteToken(it->first);
      it = tokens_.erase(it);
    } else {
      ++it;
    }
  }
  if (tokens_.size() >= 10000) {
    return r.Fail(Status(Code::kResourceExhausted, "10000 join tokens are live; wait for some"));
  }
  // What the node may declare is the operator's word, given now or before: never the node's own.
  if (req.boards_size() > 0) {
    auto approval = Approve(ctx, req.node(), req.boards(), req.pools());
    if (!approval.ok()) return r.Fail(approval.status());
  } else if (const v1::NodeApproval* a = approvals_.Find(req.node());
             a == nullptr || a->boards_size() == 0) {
    return r.Fail(FailedPrecondition(
        "node " + req.node() +
        " has no approved inventory: give its boards with the token (snnctl node token " +
        req.node() + " --boards FILE, its boards file) or approve them first (snnctl node add " +
        req.node() + " --boards FILE); a node's own first registration is never taken as one"));
  }
  v1::JoinTokenRecord record;
  record.set_node(req.node());
  record.set_expires_ms(now + ttl_s * 1000);
  record.set_created_by(ctx.identity.Describe());
  tokens_[hash] = record;
  journal_.PutToken(hash, record);
  LOG(INFO) << ctx.identity.Describe() << " created a join token for node " << req.node()
            << " valid " << ttl_s << " s";
  v1::NodeTokenResponse resp;
  resp.set_token(token);
  resp.set_expires_ms(record.expires_ms());
  journal_.Commit([r, resp] { r.Ok(resp); });
}

void EnrolService::Enrol(const CallContext& ctx, v1::EnrolRequest req,
                         Responder<v1::EnrolResponse> r) {
  const std::string hash = HashToken(req.token());
  auto it = tokens_.find(hash);
  if (it == tokens_.end() || it->second.expires_ms() <= clock_.NowMs()) {
    // Anyone may try: one line in a hundred, counted, so that made-up tokens cannot fill the log.
    LOG_EVERY_N(WARNING, 100) << "refused an enrolment as node '" << req.node().substr(0, 64)
                              << "' from " << ctx.connection->peer()
                              << ": unknown, used or expired join token (" << google::COUNTER
                              << " so far)";
    return r.Fail(
        Unauthenticated("the join token is unknown, used or expired; ask an admin for a new one "
                        "(snnctl node token NODE)"));
  }
  if (it->second.node() != req.node()) {
    return r.Fail(PermissionDenied("this join token is for node '" + it->second.node() +
                                   "', not '" + req.node().substr(0, 64) + "'"));
  }
  auto cert = Sign(req.node(), req.csr_pem());
  if (!cert.ok()) return r.Fail(cert.status());
  const std::string it_created_by = it->second.created_by();
  tokens_.erase(it);
  journal_.DeleteToken(hash);  // used up, durably, before the node has its certificate
  journal_.PutApproval(
      approvals_.Enrolled(req.node(), "the join token of " + it_created_by, clock_.NowMs()));
  LOG(INFO) << "node " << req.node() << " enrolled from " << ctx.connection->peer();
  v1::EnrolResponse resp;
  resp.set_cert_pem(*cert);
  journal_.Commit([r, resp] { r.Ok(resp); });
}

Result<v1::NodeApproval> EnrolService::Approve(
    const CallContext& ctx, const std::string& node,
    const google::protobuf::RepeatedPtrField<v1::BoardInfo>& boards,
    const google::protobuf::RepeatedPtrField<std::string>& pools) {
  v1::NodeRecord declared;  // the inventory must itself be one a node could declare
  declared.set_name(node);
  *declared.mutable_boards() = boards;
  *declared.mutable_pools() = pools;
  for (int i = 0; i < declared.boards_size(); ++i) declared.mutable_boards(i)->set_index(i);
  if (declared.pools_size() == 0) declared.add_pools("any");  // pools may be left open
  if (Status s = AgentService::ValidateNode(declared); !s.ok()) return s;
  v1::NodeApproval inventory;
  *inventory.mutable_boards() = boards;
  *inventory.mutable_pools() = pools;
  v1::NodeApproval approval =
      approvals_.Add(node, inventory, ctx.identity.Describe(), clock_.NowMs());
  journal_.PutApproval(approval);
  LOG(INFO) << ctx.identity.Describe() << " approved node " << node << ": " << boards.size()
            << " boards";
  return approval;
}

void EnrolService::Add(const CallContext& ctx, v1::NodeAddRequest req,
                       Responder<v1::NodeAddResponse> r) {
  if (Status s = ValidateNodeName(req.node()); !s.ok()) return r.Fail(s);
  auto approval = Approve(ctx, req.node(), req.boards(), req.pools());
  if (!approval.ok()) return r.Fail(approval.status());
  v1::NodeAddResponse resp;
  *resp.mutable_approval() = *std::move(approval);
  journal_.Commit([r, resp] { r.Ok(resp); });
}

void EnrolService::Revoke(const CallContext& ctx, v1::NodeRevokeRequest req,
                          Responder<v1::NodeRevokeResponse> r) {
  if (Status s = ValidateNodeName(req.node()); !s.ok()) return r.Fail(s);
  v1::NodeRevokeResponse resp;
  *resp.mutable_approval() = approvals_.Revoke(req.node(), ctx.identity.Describe(), clock_.NowMs());
  journal_.PutApproval(resp.approval());
  LOG(WARNING) << ctx.identity.Describe() << " revoked every certificate of node " << req.node()
               << " (generation " << resp.approval().generation() << " on)";
  const std::string node = req.node();
  journal_.Commit([this, r, resp, node] {
    on_revoked_(node);
    r.Ok(resp);
  });
}

void EnrolService::Renew(const CallContext& ctx, v1::RenewRequest req,
                         Responder<v1::RenewResponse> r) {
  // The session's own certificate asks (its holder proved the key in the handshake), in the
  // second half of its life only, and once: a second renewal of one serial can only come from a
  // copy, so every certificate of the node is revoked.
  const Identity& node = ctx.identity;
  const int64_t now_s = clock_.NowMs() / 1000;
  const int64_t from_s =
      node.cert_not_before_s + (node.cert_not_after_s - node.cert_not_before_s) / 2;
  if (node.cert_serial.empty() || now_s < from_s) {
    return r.Fail(FailedPrecondition(
        "a node certificate renews in the second half of its life: this one from " +
        std::to_string(from_s) + " (Unix seconds), not " + std::to_string(now_s)));
  }
  if (!approvals_.FirstRenewal(node.node, node.cert_serial, node.cert_not_after_s, now_s)) {
    journal_.PutApproval(approvals_.Revoke(
        node.node, "a second renewal of certificate " + node.cert_serial, clock_.NowMs()));
    LOG(ERROR) << "certificate " << node.cert_serial << " of node " << node.node
               << " asked to be renewed a second time (from " << ctx.sink->peer()
               << "): a copy of it is in use; every certificate of the node is revoked";
    const std::string name = node.node;
    return journal_.Commit([this, r, name, serial = node.cert_serial] {
      on_revoked_(name);
      r.Fail(Unauthenticated("certificate " + serial + " of node " + name +
                             " was renewed before: a copy of it is in use, so every certificate "
                             "of the node " +
                             kCertificateRevoked +
                             "; it must enrol again with a "
                             "new join token (snnctl node token " +
                             name + ")"));
    });
  }
  auto cert = Sign(node.node, req.csr_pem());
  if (!cert.ok()) return r.Fail(cert.status());
  journal_.PutApproval(*approvals_.Find(node.node));
  LOG(INFO) << "renewed the certificate of node " << node.node << " (" << node.cert_serial << ")";
  v1::RenewResponse resp;
  resp.set_cert_pem(*cert);
  journal_.Commit([r, resp] { r.Ok(resp); });
}

}  // namespace snn
