// What each node may declare, as an operator approved it, and which generation of its
// certificates is valid (see NodeApproval in proto/node.proto):
// - `snnctl node add NODE --boards FILE`, or `snnctl node token NODE --boards FILE`, approves an
//   inventory; a node without one registers nothing (its own first word is never taken).
// - A registration that declares more than approved (another board, a bigger mesh, more KSPS or
//   streams, another board type, a pool not approved) is refused with the item at fault; one that
//   declares less (a dead core, a board gone) is taken.
// - `snnctl node revoke NODE` moves the generation on: every certificate issued for the node
//   before (and any copy of one) is refused at its next request, until it enrols again.
// Thread contract: only on the master's io thread. No I/O: the caller journals what changes.
#pragma once

#include <map>
#include <string>

#include "common/base/status.h"
#include "proto/node.pb.h"

namespace snn {

class NodeApprovals {
 public:
  void Restore(v1::NodeApproval approval);
  // At recovery, for a node the master knew before approvals existed (no approval stored): what
  // it last registered with is its approval. Not journaled: derived again at each recovery from
  // the node's record, which only an approved registration changes.
  void AdoptRegistered(const v1::NodeRecord& record);
  const v1::NodeApproval* Find(const std::string& node) const;

  // Approves `boards` and `pools` for `node` (replacing an earlier approval, keeping its
  // generation). Returns the record to journal.
  v1::NodeApproval Add(const std::string& node, const v1::NodeApproval& inventory,
                       const std::string& by, int64_t now_ms);
  // A join token was used: the node's approval is kept and a revoked node is no longer revoked.
  // Returns the record to journal.
  v1::NodeApproval Enrolled(const std::string& node, const std::string& by, int64_t now_ms);
  // Moves the generation on and marks the node revoked. Returns the record to journal.
  v1::NodeApproval Revoke(const std::string& node, const std::string& by, int64_t now_ms);

  // Whether a certificate of `generation` for `node` is valid: Ok, or why not.
  Status CheckCertificate(const std::string& node, uint64_t generation) const;
  // The generation new certificates for `node` are issued in.
  uint64_t Generation(const std::string& node) const;
  // A certificate of `node` (`serial`, valid until `not_after_s`) asks to be renewed at `now_s`:
  // true the first time (it is kept until it expires: journal Find(node)); false when it was
  // renewed before, which only a copy of it can ask.
  bool FirstRenewal(const std::string& node, const std::string& serial, int64_t not_after_s,
                    int64_t now_s);

  // Whether `declared` fits the node's approval: Ok, or the item at fault. An approval made
  // from the first registration takes this one (`*changed` set: journal Find(node)).
  Status CheckRegistration(const v1::NodeRecord& declared, bool* changed);

 private:
  std::map<std::string, v1::NodeApproval> approvals_;
};

}  // namespace snn
