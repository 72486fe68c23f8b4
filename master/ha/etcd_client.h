// A small client of etcd's v3 gRPC API for the master's high-availability mode: key ranges,
// transactions, leases, watches and the election service. It holds a channel to each member it
// is given and moves to the next one when a member is unreachable; every call has a deadline.
// Thread contract: every method may be called from any thread (gRPC stubs are thread-safe).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/base/status.h"
#include "etcd_election.grpc.pb.h"
#include "etcd_kv.grpc.pb.h"

namespace snn {

struct EtcdEndpoints {
  std::vector<std::string> hosts;  // HOST:PORT each
  bool tls = false;                // https:// (every one, or none)
};
// "http://a:2379,b:2379", "a:2379,b:2379" or "https://a:2379,https://b:2379"; an error names
// the bad one (or a list that mixes https with plain endpoints).
Result<EtcdEndpoints> ParseEtcdEndpoints(const std::string& list);

// The files of TLS to etcd: the CA that signed its members' certificates, and this client's own
// certificate and key when etcd asks for one (--client-cert-auth). Empty paths: none.
struct EtcdTlsFiles {
  std::string ca, cert, key;
};
// Credentials for `endpoints`: TLS with `files` (read now, errors name the file) or plain.
Result<std::shared_ptr<grpc::ChannelCredentials>> EtcdCredentials(const EtcdEndpoints& endpoints,
                                                                  const EtcdTlsFiles& files);

// The smallest key greater than every key starting with `prefix` (etcd's range_end for it).
std::string PrefixEnd(const std::string& prefix);

class EtcdClient {
 public:
  EtcdClient(std::vector<std::string> endpoints, std::chrono::milliseconds timeout,
             std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);

  Result<etcdserverpb::RangeResponse> Range(const etcdserverpb::RangeRequest& request);
  Result<etcdserverpb::TxnResponse> Txn(const etcdserverpb::TxnRequest& request);
  Result<etcdserverpb::PutResponse> Put(const etcdserverpb::PutRequest& request);
  Result<etcdserverpb::DeleteRangeResponse> DeleteRange(
      const etcdserverpb::DeleteRangeRequest& request);

  // Drops the history of every key before `revision` (what was deleted or overwritten).
  Status Compact(int64_t revision);

  // A lease of `ttl_s` seconds; its id.
  Result<int64_t> GrantLease(int64_t ttl_s);
  Status RevokeLease(int64_t lease);
  // Renews `lease` once; the TTL left (0: the lease is gone).
  Result<int64_t> KeepAliveOnce(int64_t lease);

  // Blocks until this caller leads election `name` (or CancelCampaign, or an error).
  Result<v3electionpb::LeaderKey> Campaign(const std::string& name, int64_t lease,
                                           const std::string& value);
  void CancelCampaign();
  // The current leader's value (its advertised address), or nullopt when none leads.
  Result<std::optional<std::string>> LeaderValue(const std::string& name);
  Status Resign(const v3electionpb::LeaderKey& leader);

  // A watch on every key under `prefix` from `start_revision` on. Read blocks until events come,
  // the watch ends (compaction: compact_revision set) or Cancel is called from another thread.
  class Watch {
   public:
    bool Read(etcdserverpb::WatchResponse* response);
    void Cancel() { context_.TryCancel(); }

   private:
    friend class EtcdClient;
    grpc::ClientContext context_;
    std::unique_ptr<
        grpc::ClientReaderWriter<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>>
        stream_;
  };
  Result<std::unique_ptr<Watch>> StartWatch(const std::string& prefix, int64_t start_revision);

  const std::vector<std::string>& endpoints() const { return endpoints_; }

 private:
  struct Member {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;
    std::unique_ptr<etcdserverpb::Lease::Stub> lease;
    std::unique_ptr<etcdserverpb::Watch::Stub> watch;
    std::unique_ptr<v3electionpb::Election::Stub> election;
  };
  // Runs `call` on the current member, moving on to the next while members are unreachable.
  template <typename Call>
  Status OnSomeMember(const char* what, std::chrono::milliseconds timeout, Call&& call);

  const std::vector<std::string> endpoints_;
  const std::chrono::milliseconds timeout_;
  std::vector<Member> members_;
  std::atomic<size_t> current_{0};
  std::mutex campaign_mu_;
  grpc::ClientContext* campaign_ = nullptr;  // guarded by campaign_mu_
  bool campaign_cancelled_ = false;          // guarded by campaign_mu_
};

}  // namespace snn
