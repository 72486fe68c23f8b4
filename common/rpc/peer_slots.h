// Who holds a server's connections, by peer address, so that no one user of a shared address (a
// login node) can lock the others out:
// - A connection is anonymous until it proves who it is (a user's credential, a node's
//   certificate). One address has at most `max_anonymous_per_peer` of those; one more evicts
//   the oldest (a flood of idle connections cannot keep newcomers out, the way a refusal would),
//   and the server closes those that stay anonymous too long.
// - A proven connection belongs to its owner ("uid 1000", "node node3") at that address; each
//   owner has at most `max_per_owner` there. Over that, the newly proven one is refused: a user
//   who opens too many hurts only themself.
// - In all, `max_total`; an address with fewer than `always_admit` open still gets in.
// Ids are the caller's, one per connection. Thread-compatible.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace snn {

struct PeerSlotLimits {
  size_t max_total = 4096;
  size_t always_admit = 4;
  size_t max_anonymous_per_peer = 64;
  size_t max_per_owner = 256;
};

class PeerSlots {
 public:
  using Id = uint64_t;
  explicit PeerSlots(const PeerSlotLimits& limits) : limits_(limits) {}

  struct Admission {
    bool admitted = false;
    std::optional<Id> evicted;  // the caller closes it (already released here)
    std::string refusal;        // why not, when not admitted
  };
  // A new anonymous connection from `peer`, accepted at `now_ms`.
  Admission Admit(Id id, const std::string& peer, int64_t now_ms);
  // `id` proved it is `owner`. Returns why it must be closed (empty: it may stay); either way it
  // counts as the owner's until Release. A second call for the same id changes nothing.
  std::string Own(Id id, const std::string& owner);
  void Release(Id id);
  // Anonymous connections accepted before `cutoff_ms`.
  std::vector<Id> AnonymousSince(int64_t cutoff_ms) const;

  size_t total() const { return slots_.size(); }
  size_t anonymous(const std::string& peer) const;
  size_t owned(const std::string& peer, const std::string& owner) const;
  void Clear();

 private:
  struct Slot {
    std::string peer;
    std::string owner;  // empty: anonymous
    int64_t since_ms = 0;
    std::list<Id>::iterator in_queue;  // anonymous only: its place in the peer's queue
  };
  struct Peer {
    std::list<Id> anonymous;  // oldest first
    std::map<std::string, size_t> owned;
    size_t total = 0;
  };
  void Unlink(Slot& slot);

  PeerSlotLimits limits_;
  std::unordered_map<Id, Slot> slots_;
  std::unordered_map<std::string, Peer> peers_;
};

}  // namespace snn
