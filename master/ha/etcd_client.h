// The master's client of etcd's v3 gRPC API (the Etcd interface of etcd.h). It holds a channel to
// each member it is given and moves to the next one when a member is unreachable; every call has a
// deadline. Thread contract: every method may be called from any thread (gRPC stubs are
// thread-safe).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/status.h"
#include "etcd_election.grpc.pb.h"
#include "etcd_kv.grpc.pb.h"
#include "master/ha/etcd.h"

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

class EtcdClient : public Etcd {
 public:
  // Pauses between rounds of retries wait on `clock`.
  EtcdClient(std::vector<std::string> endpoints, int64_t timeout_ms, const Clock& clock,
             std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);

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
  Status OnSomeMember(const char* what, int64_t timeout_ms, Call&& call);

  const std::vector<std::string> endpoints_;
  const int64_t timeout_ms_;
  const Clock& clock_;
  std::vector<Member> members_;
  std::atomic<size_t> current_{0};
  std::mutex campaign_mu_;
  grpc::ClientContext* campaign_ = nullptr;  // guarded by campaign_mu_
  bool campaign_cancelled_ = false;          // guarded by campaign_mu_
};

}  // namespace snn
