#include "master/nodes/node_approvals.h"

#include <algorithm>

#include "common/rpc/service_refusals.h"

namespace snn {
namespace {

std::string Mesh(const v1::BoardInfo& b) {
  return std::to_string(b.width()) + "x" + std::to_string(b.height());
}

// Why `declared` (board `i`) is more than `approved`, or "".
std::string BoardExcess(int i, const v1::BoardInfo& declared, const v1::BoardInfo& approved) {
  const std::string which = "board " + std::to_string(i);
  if (declared.type() != approved.type()) {
    return which + " is of type '" + declared.type() + "'; '" + approved.type() + "' was approved";
  }
  if (declared.width() > approved.width() || declared.height() > approved.height()) {
    return which + " declares a " + Mesh(declared) + " mesh; " + Mesh(approved) + " was approved";
  }
  auto more = [&](const char* what, uint64_t d, uint64_t a) {
    return which + " declares " + std::to_string(d) + " " + what + "; " + std::to_string(a) +
           " was approved";
  };
  if (declared.ksps() > approved.ksps()) return more("KSPS", declared.ksps(), approved.ksps());
  if (declared.streams() > approved.streams()) {
    return more("streams", declared.streams(), approved.streams());
  }
  if (declared.neurons_per_core() > approved.neurons_per_core()) {
    return more("neurons per core", declared.neurons_per_core(), approved.neurons_per_core());
  }
  return "";
}

// What `record` declares, without what changes as a board runs (dead cores, health, ...).
void TakeInventory(const v1::NodeRecord& record, v1::NodeApproval& a) {
  *a.mutable_boards() = record.boards();
  *a.mutable_pools() = record.pools();
  for (auto& b : *a.mutable_boards()) {
    b.clear_dead_cores();
    b.clear_health();
    b.clear_measured_ksps();
    b.clear_latency_us();
    b.clear_io_port();
  }
}

}  // namespace

void NodeApprovals::AdoptRegistered(const v1::NodeRecord& record) {
  if (approvals_.count(record.name()) || record.boards_size() == 0) return;
  v1::NodeApproval& a = approvals_[record.name()];
  a.set_node(record.name());
  TakeInventory(record, a);
  a.set_approved_by("its registration before inventories were approved");
}

void NodeApprovals::Restore(v1::NodeApproval approval) {
  const std::string node = approval.node();
  approvals_[node] = std::move(approval);
}

const v1::NodeApproval* NodeApprovals::Find(const std::string& node) const {
  auto it = approvals_.find(node);
  return it == approvals_.end() ? nullptr : &it->second;
}

v1::NodeApproval NodeApprovals::Add(const std::string& node, const v1::NodeApproval& inventory,
                                    const std::string& by, int64_t now_ms) {
  v1::NodeApproval& a = approvals_[node];
  const uint64_t generation = a.generation();
  const bool revoked = a.revoked();
  a = inventory;
  a.set_node(node);
  a.set_generation(generation);
  a.set_revoked(revoked);
  a.set_from_first_registration(false);
  a.set_approved_by(by);
  a.set_approved_ms(now_ms);
  for (int i = 0; i < a.boards_size(); ++i) a.mutable_boards(i)->set_index(i);
  return a;
}

v1::NodeApproval NodeApprovals::Enrolled(const std::string& node, const std::string& by,
                                         int64_t now_ms) {
  v1::NodeApproval& a = approvals_[node];
  a.set_node(node);
  a.set_revoked(false);
  a.set_from_first_registration(false);
  return a;
}

v1::NodeApproval NodeApprovals::Revoke(const std::string& node, const std::string& by,
                                       int64_t now_ms) {
  v1::NodeApproval& a = approvals_[node];
  a.set_node(node);
  a.set_generation(a.generation() + 1);
  a.set_revoked(true);
  a.set_approved_by(by);
  a.set_approved_ms(now_ms);
  return a;
}

Status NodeApprovals::CheckCertificate(const std::string& node, uint64_t generation) const {
  const v1::NodeApproval* a = Find(node);
  if (a == nullptr) return Status::Ok();
  if (a->revoked() || generation < a->generation()) {
    return Unauthenticated("the certificate of node " + node + " " + kCertificateRevoked +
                           " (snnctl node revoke); the node must enrol again with a "
                           "new join token (snnctl node token " +
                           node + ")");
  }
  return Status::Ok();
}

bool NodeApprovals::FirstRenewal(const std::string& node, const std::string& serial,
                                 int64_t not_after_s, int64_t now_s) {
  v1::NodeApproval& a = approvals_[node];
  a.set_node(node);
  auto* renewed = a.mutable_renewed();
  for (int i = renewed->size() - 1; i >= 0; --i) {  // expired ones can renew nothing any more
    if (renewed->Get(i).not_after_s() < now_s) renewed->DeleteSubrange(i, 1);
  }
  for (const auto& r : *renewed) {
    if (r.serial() == serial) return false;
  }
  v1::RenewedCertificate* r = renewed->Add();
  r->set_serial(serial);
  r->set_not_after_s(not_after_s);
  return true;
}

uint64_t NodeApprovals::Generation(const std::string& node) const {
  const v1::NodeApproval* a = Find(node);
  return a == nullptr ? 0 : a->generation();
}

Status NodeApprovals::CheckRegistration(const v1::NodeRecord& declared, bool* changed) {
  *changed = false;
  const std::string& node = declared.name();
  auto it = approvals_.find(node);
  const std::string add_hint =
      "; if the node's hardware changed, approve it again: snnctl node "
      "add " +
      node + " --boards FILE (its boards file)";
  // An approval "from the first registration" (an older master's rule) approves nothing.
  if (it == approvals_.end() || it->second.boards_size() == 0) {
    return PermissionDenied("node " + node +
                            " has no approved inventory: approve what it may declare with "
                            "snnctl node add " +
                            node +
                            " --boards FILE (its boards file), or enrol it with a join token");
  }
  v1::NodeApproval& a = it->second;
  if (a.revoked()) {
    return Unauthenticated("node " + node + " " + kCertificateRevoked +
                           "; it must enrol again with a new join token");
  }
  if (declared.boards_size() > a.boards_size()) {
    return PermissionDenied("node " + node + " declares " + std::to_string(declared.boards_size()) +
                            " boards; at most " + std::to_string(a.boards_size()) + " approved" +
                            add_hint);
  }
  for (int i = 0; i < declared.boards_size(); ++i) {
    const std::string excess = BoardExcess(i, declared.boards(i), a.boards(i));
    if (!excess.empty()) return PermissionDenied("node " + node + " " + excess + add_hint);
  }
  if (a.pools_size() > 0) {
    for (const std::string& pool : declared.pools()) {
      if (std::find(a.pools().begin(), a.pools().end(), pool) == a.pools().end()) {
        return PermissionDenied("node " + node + " declares pool '" + pool +
                                "', which was not approved" + add_hint);
      }
    }
  }
  return Status::Ok();
}

}  // namespace snn
