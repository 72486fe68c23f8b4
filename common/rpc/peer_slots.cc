#include "common/rpc/peer_slots.h"

namespace snn {

PeerSlots::Admission PeerSlots::Admit(Id id, const std::string& peer, int64_t now_ms) {
  Admission out;
  Peer& p = peers_[peer];
  if (slots_.size() >= limits_.max_total && p.total >= limits_.always_admit) {
    if (p.total == 0) peers_.erase(peer);
    out.refusal = std::to_string(slots_.size()) + " connections are open";
    return out;
  }
  if (p.anonymous.size() >= limits_.max_anonymous_per_peer) {
    const Id oldest = p.anonymous.front();
    Release(oldest);
    out.evicted = oldest;
  }
  Peer& q = peers_[peer];  // Release may have erased it
  q.anonymous.push_back(id);
  ++q.total;
  slots_[id] = Slot{peer, "", now_ms, std::prev(q.anonymous.end())};
  out.admitted = true;
  return out;
}

std::string PeerSlots::Own(Id id, const std::string& owner) {
  auto it = slots_.find(id);
  if (it == slots_.end() || !it->second.owner.empty() || owner.empty()) return "";
  Slot& slot = it->second;
  Peer& p = peers_[slot.peer];
  p.anonymous.erase(slot.in_queue);
  slot.owner = owner;
  size_t& held = p.owned[owner];
  ++held;
  if (held > limits_.max_per_owner) {
    return std::to_string(limits_.max_per_owner) + " connections of " + owner + " are open from " +
           slot.peer + " (the most one user or node may have from one address)";
  }
  return "";
}

void PeerSlots::Unlink(Slot& slot) {
  auto pit = peers_.find(slot.peer);
  if (pit == peers_.end()) return;
  Peer& p = pit->second;
  if (slot.owner.empty()) {
    p.anonymous.erase(slot.in_queue);
  } else if (auto o = p.owned.find(slot.owner); o != p.owned.end() && --o->second == 0) {
    p.owned.erase(o);
  }
  if (--p.total == 0) peers_.erase(pit);
}

void PeerSlots::Release(Id id) {
  auto it = slots_.find(id);
  if (it == slots_.end()) return;
  Unlink(it->second);
  slots_.erase(it);
}

std::vector<PeerSlots::Id> PeerSlots::AnonymousSince(int64_t cutoff_ms) const {
  std::vector<Id> out;
  for (const auto& [peer, p] : peers_) {
    for (Id id : p.anonymous) {
      if (slots_.at(id).since_ms >= cutoff_ms) break;  // the queue is oldest first
      out.push_back(id);
    }
  }
  return out;
}

size_t PeerSlots::anonymous(const std::string& peer) const {
  auto it = peers_.find(peer);
  return it == peers_.end() ? 0 : it->second.anonymous.size();
}

size_t PeerSlots::owned(const std::string& peer, const std::string& owner) const {
  auto it = peers_.find(peer);
  if (it == peers_.end()) return 0;
  auto o = it->second.owned.find(owner);
  return o == it->second.owned.end() ? 0 : o->second;
}

void PeerSlots::Clear() {
  slots_.clear();
  peers_.clear();
}

}  // namespace snn
