// An in-memory etcd for unit tests of the master's HA mode: the part of etcd's v3 API that
// master/ha/ uses (multi-version keys with revisions, ranges at a past revision, transactions
// with compares, leases, compaction, watches, the election service), in one process.
// FakeEtcdServer holds the state and the faults a test injects on it (depose the leader, expire
// a lease); each master gets its own FakeEtcd connection, with faults of its own (cut off from
// etcd, writes lost before or after they apply, writes held back until released).
// Leases expire by the clock given (a ManualClock in tests) or when a test says so.
// Thread contract: everything may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "master/ha/etcd.h"

namespace snn {

class FakeEtcdServer {
 public:
  explicit FakeEtcdServer(const Clock& clock) : clock_(clock) {}

  // Faults.
  // Deletes the current leader key of election `name` (as an operator or a lost lease would).
  bool DeposeLeader(const std::string& name);
  // Ends `lease` now: its keys are deleted.
  void ExpireLease(int64_t lease);

  // What a test inspects.
  // The lease of the current leader of election `name` (0: none leads).
  int64_t LeaderLease(const std::string& name);
  std::optional<std::string> Value(const std::string& key);
  std::vector<std::string> KeysWithPrefix(const std::string& prefix);
  int64_t revision();
  int64_t compacted_revision();

 private:
  friend class FakeEtcd;
  friend class FakeEtcdWatch;

  struct Version {
    int64_t revision = 0;
    std::optional<etcdserverpb::KeyValue> kv;  // nullopt: deleted at `revision`
  };
  struct Lease {
    int64_t ttl_s = 0;
    int64_t expires_ms = 0;  // clock_.MonotonicMs()
  };

  // All of these run with mu_ held.
  void ExpireDueLeases();
  void EndLease(int64_t lease);
  const etcdserverpb::KeyValue* Latest(const std::string& key, int64_t at_revision) const;
  void PutLocked(const std::string& key, const std::string& value, int64_t lease);
  int64_t DeleteLocked(const std::string& key, const std::string& range_end);
  bool InRange(const std::string& key, const std::string& from, const std::string& end) const;
  etcdserverpb::RangeResponse RangeLocked(const etcdserverpb::RangeRequest& request) const;
  bool CompareHolds(const etcdserverpb::Compare& compare) const;
  etcdserverpb::TxnResponse TxnLocked(const etcdserverpb::TxnRequest& request);
  // The key of the leader of election `name` (lowest create revision), or nullptr.
  const etcdserverpb::KeyValue* LeaderLocked(const std::string& name) const;
  void SetHeader(etcdserverpb::ResponseHeader* header) const;
  // Opens a new revision for the writes that follow (one per write request, as etcd does).
  void BeginWrite();

  const Clock& clock_;
  std::mutex mu_;
  std::condition_variable changed_;  // any write, lease end, cancel or release
  int64_t revision_ = 1;             // guarded by mu_
  bool write_open_ = false;          // guarded by mu_: a revision was opened for this request
  int64_t compacted_ = 0;            // guarded by mu_
  std::map<std::string, std::vector<Version>> keys_;  // guarded by mu_
  std::vector<etcdserverpb::Event> events_;           // guarded by mu_: since compacted_
  std::map<int64_t, Lease> leases_;                   // guarded by mu_
  int64_t next_lease_ = 0x1000;                       // guarded by mu_
};

// One master's connection to a FakeEtcdServer.
class FakeEtcd : public Etcd {
 public:
  explicit FakeEtcd(FakeEtcdServer& server) : server_(server) {}

  // Faults of this connection.
  // Every call fails as if no etcd member answered (and a blocked campaign or watch ends).
  void SetUnreachable(bool unreachable);
  // The next `n` writes (Put, Txn) are lost before they apply; the caller gets an error.
  void DropWritesBefore(int n);
  // The next `n` writes apply, but their answers are lost; the caller gets an error.
  void DropAnswersAfter(int n);
  // From now on writes wait until ReleaseWrites (deposing a leader meanwhile, for example).
  void HoldWrites();
  void ReleaseWrites();
  // While paused, this connection's watches deliver nothing (they fall behind).
  void PauseWatches(bool paused);
  // How many writes are waiting because of HoldWrites.
  int held_writes();

  Result<etcdserverpb::RangeResponse> Range(const etcdserverpb::RangeRequest& request) override;
  Result<etcdserverpb::TxnResponse> Txn(const etcdserverpb::TxnRequest& request) override;
  Result<etcdserverpb::PutResponse> Put(const etcdserverpb::PutRequest& request) override;
  Status Compact(int64_t revision) override;
  Result<int64_t> GrantLease(int64_t ttl_s) override;
  Status RevokeLease(int64_t lease) override;
  Result<int64_t> KeepAliveOnce(int64_t lease) override;
  Result<v3electionpb::LeaderKey> Campaign(const std::string& name, int64_t lease,
                                           const std::string& value) override;
  void CancelCampaign() override;
  Result<std::optional<std::string>> LeaderValue(const std::string& name) override;
  Status Resign(const v3electionpb::LeaderKey& leader) override;
  Result<std::unique_ptr<EtcdWatch>> StartWatch(const std::string& prefix,
                                                int64_t start_revision) override;

 private:
  friend class FakeEtcdWatch;
  // With server_.mu_ held: the error of an unreachable connection, if it is.
  Status Reachable() const;
  // With server_.mu_ held: waits out HoldWrites, then applies the drop faults. `apply` writes.
  template <typename Apply>
  Status Write(std::unique_lock<std::mutex>& lock, Apply&& apply);

  FakeEtcdServer& server_;
  // All guarded by server_.mu_.
  bool unreachable_ = false;
  int drop_before_ = 0;
  int drop_after_ = 0;
  bool holding_ = false;
  bool watches_paused_ = false;
  int held_ = 0;
  bool campaign_cancelled_ = false;
};

}  // namespace snn
