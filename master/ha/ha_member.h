// One master of an --ha_etcd group. It holds an etcd lease (renewed from its own thread),
// follows the replicated log into its own store while it stands by, learns who leads (for the
// redirects a standby answers with), and campaigns. Once elected it applies what is left of the
// log and hands the store the fence (HaStore::Lead); as leader it compacts the log below what
// every member has applied. Losing the lease or the leadership calls `on_lost`: the process
// ends, and its supervisor starts it again as a standby.
// Thread contract: Start, Campaign and Stop from one thread; leader_address from any.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "common/base/clock.h"
#include "master/ha/etcd.h"
#include "master/ha/ha_store.h"
#include "master/ha/replicated_log.h"

namespace snn {

struct HaOptions {
  std::string prefix = "/snn/";  // every key of this group starts with it
  std::string member;            // this master's name in the group (unique)
  std::string advertise;         // HOST:PORT that agents and clients should use for this master
  int64_t lease_ttl_s = 5;
  // The master's TLS directory (ca.crt, master.crt, master.key): a standby that fell behind the
  // kept log fetches a snapshot from the leader with them. Empty: --auth=none, no snapshots.
  std::string tls_dir;
  int64_t compact_interval_ms = 5000;
  // Batches kept in etcd for a member that is away, at most (one that falls further behind
  // copies the leader's store when it comes back).
  uint64_t max_log_batches = 50000;
};

class HaMember {
 public:
  // Every pause and every lease deadline is on `clock`.
  HaMember(Etcd& etcd, HaStore& store, const Clock& clock, HaOptions options,
           std::function<void(const std::string&)> on_lost);
  ~HaMember();

  // Grants the lease and starts following the log.
  Status Start();
  // Blocks until this master leads, then catches up and arms the store. An error: Stop was
  // called, or etcd refused.
  Status Campaign();
  // Resigns (a standby takes over at once), revokes the lease, stops every thread.
  void Stop();

  bool leading() const { return leading_.load(); }
  bool stopping() const { return stopping_.load(); }
  // Before Campaign: the address this master is reached at, when only known once listening.
  void set_advertise(std::string address) { options_.advertise = std::move(address); }
  // The leader's advertised address as last seen ("" when unknown).
  std::string leader_address() const;
  // Whether this member's lease is surely still alive (renewed less than a TTL ago, with margin).
  bool LeaseValid() const;
  uint64_t applied_seq() const { return applied_.load(); }

 private:
  void KeepAliveLoop();
  // Ends the process (on_lost) as soon as the lease may have lapsed, however long a renewal
  // call blocks: a leader cut off from etcd stops before its lease expires there.
  void GuardLoop();
  void FollowLoop();
  // Learns who leads (a standby's redirects); a leader checks that its key is still its own, so
  // that a deposed leader stops even when it has nothing to write.
  void LeaderWatchLoop();
  bool StillLeads();
  void CompactLoop();
  // Applies the log from applied_+1 on; the etcd revision it read at. FailedPrecondition: the
  // log was compacted past this master's position.
  Result<int64_t> CatchUp(LogAssembler& assembler);
  // Applies `batch` if it is the next one, else keeps it until the batches before it come
  // (the leader writes several at once); drops what a deposed leader left beyond a gap.
  Status Apply(LogAssembler::Batch batch);
  // A new leader's first write: deletes whatever the log holds past what it applied (batches
  // beyond a gap, never acknowledged), fenced by its leader key.
  Status DropLogTail();
  // Replaces this master's store with a copy of the leader's (ha.snapshot), marked incomplete
  // until the last page is in; then the log is applied from the copy's position on.
  Status TakeSnapshot();
  // Records in etcd the last batch this master's store holds (at most once a second unless
  // `now`), so the leader keeps the log from there.
  void ReportApplied(bool now = false);
  bool Sleep(int64_t ms) { return pause_.SleepMs(ms); }  // false once stopping

  Etcd& etcd_;
  HaStore& store_;
  const Clock& clock_;
  HaOptions options_;  // advertise: set before Campaign
  const std::function<void(const std::string&)> on_lost_;

  int64_t lease_ = 0;
  std::atomic<int64_t> lease_renewed_ms_{0};  // MonotonicMs when the last good renewal was sent
  std::atomic<bool> leading_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> following_{false};
  std::atomic<uint64_t> applied_{0};
  // Batches that came before one they follow (the follower, then Campaign).
  std::map<uint64_t, LogAssembler::Batch> early_;
  v3electionpb::LeaderKey leader_key_;

  InterruptibleSleep pause_;  // every loop's pause; Stop cuts them short

  mutable std::mutex mu_;
  std::string leader_address_;  // guarded by mu_
  EtcdWatch* watch_ = nullptr;  // guarded by mu_
  uint64_t reported_seq_ = 0;   // Start, the follower, then (leading) the compactor
  int64_t reported_at_ms_ = 0;  // likewise; MonotonicMs

  std::thread keepalive_;
  std::thread guard_;
  std::thread follower_;
  std::thread leader_watch_;
  std::thread compactor_;
};

}  // namespace snn
