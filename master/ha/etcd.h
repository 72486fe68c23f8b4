// What the master's high-availability mode needs from etcd: key ranges, transactions, leases,
// watches and the election service, as an interface. EtcdClient (etcd_client.h) speaks etcd's
// v3 gRPC API; tests use an in-memory etcd (tests/test_util/fake_etcd.h) that can depose a
// leader, expire a lease and lose or hold back writes on a manual clock.
// Thread contract: every method may be called from any thread.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/base/status.h"
#include "etcd_election.pb.h"
#include "etcd_kv.pb.h"

namespace snn {

// The smallest key greater than every key starting with `prefix` (etcd's range_end for it).
std::string PrefixEnd(const std::string& prefix);

// A watch on every key under a prefix from a start revision on.
class EtcdWatch {
 public:
  virtual ~EtcdWatch() = default;
  // Blocks until events come (true), or the watch ends (false; or true with compact_revision set
  // when the history it needs was compacted) or Cancel is called from another thread (false).
  virtual bool Read(etcdserverpb::WatchResponse* response) = 0;
  virtual void Cancel() = 0;
};

class Etcd {
 public:
  virtual ~Etcd() = default;

  virtual Result<etcdserverpb::RangeResponse> Range(const etcdserverpb::RangeRequest& request) = 0;
  virtual Result<etcdserverpb::TxnResponse> Txn(const etcdserverpb::TxnRequest& request) = 0;
  virtual Result<etcdserverpb::PutResponse> Put(const etcdserverpb::PutRequest& request) = 0;
  // Drops the history of every key before `revision` (what was deleted or overwritten).
  virtual Status Compact(int64_t revision) = 0;

  // A lease of `ttl_s` seconds; its id.
  virtual Result<int64_t> GrantLease(int64_t ttl_s) = 0;
  virtual Status RevokeLease(int64_t lease) = 0;
  // Renews `lease` once; the TTL left (0: the lease is gone).
  virtual Result<int64_t> KeepAliveOnce(int64_t lease) = 0;

  // Blocks until this caller leads election `name` (or CancelCampaign, or an error).
  virtual Result<v3electionpb::LeaderKey> Campaign(const std::string& name, int64_t lease,
                                                   const std::string& value) = 0;
  virtual void CancelCampaign() = 0;
  // The current leader's value (its advertised address), or nullopt when none leads.
  virtual Result<std::optional<std::string>> LeaderValue(const std::string& name) = 0;
  virtual Status Resign(const v3electionpb::LeaderKey& leader) = 0;

  virtual Result<std::unique_ptr<EtcdWatch>> StartWatch(const std::string& prefix,
                                                        int64_t start_revision) = 0;
};

}  // namespace snn
