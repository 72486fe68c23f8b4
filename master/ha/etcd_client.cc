#include "master/ha/etcd_client.h"

#include <glog/logging.h>

#include <fstream>
#include <sstream>

namespace snn {

namespace {

// A gRPC deadline `ms` from now on gRPC's own monotonic clock.
gpr_timespec DeadlineIn(int64_t ms) {
  return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

}  // namespace

Result<EtcdEndpoints> ParseEtcdEndpoints(const std::string& list) {
  EtcdEndpoints out;
  int secure = 0;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.rfind("http://", 0) == 0) item = item.substr(7);
    if (item.rfind("https://", 0) == 0) {
      item = item.substr(8);
      ++secure;
    }
    while (!item.empty() && item.back() == '/') item.pop_back();
    const auto colon = item.rfind(':');
    if (item.empty() || colon == std::string::npos || colon == 0 || colon + 1 == item.size() ||
        item.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
      return InvalidArgument("etcd endpoint '" + item + "' is not HOST:PORT");
    }
    out.hosts.push_back(item);
  }
  if (out.hosts.empty()) return InvalidArgument("no etcd endpoints given");
  if (secure != 0 && secure != static_cast<int>(out.hosts.size())) {
    return InvalidArgument("etcd endpoints mix https:// with plain ones: use one or the other");
  }
  out.tls = secure != 0;
  return out;
}

Result<std::shared_ptr<grpc::ChannelCredentials>> EtcdCredentials(const EtcdEndpoints& endpoints,
                                                                  const EtcdTlsFiles& files) {
  if (!endpoints.tls) {
    if (!files.ca.empty() || !files.cert.empty()) {
      return InvalidArgument("etcd TLS files are given but the endpoints are not https://");
    }
    return grpc::InsecureChannelCredentials();
  }
  auto read = [](const std::string& path, const char* what) -> Result<std::string> {
    if (path.empty()) return std::string();
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!in || text.str().empty()) {
      return InvalidArgument(std::string("cannot read ") + what + " " + path);
    }
    return text.str();
  };
  if (files.cert.empty() != files.key.empty()) {
    return InvalidArgument("give both the etcd client certificate and its key, or neither");
  }
  grpc::SslCredentialsOptions options;
  auto ca = read(files.ca, "the etcd CA certificate");
  if (!ca.ok()) return ca.status();
  auto cert = read(files.cert, "the etcd client certificate");
  if (!cert.ok()) return cert.status();
  auto key = read(files.key, "the etcd client key");
  if (!key.ok()) return key.status();
  options.pem_root_certs = *ca;  // empty: the system's roots
  options.pem_cert_chain = *cert;
  options.pem_private_key = *key;
  return grpc::SslCredentials(options);
}

std::string PrefixEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

EtcdClient::EtcdClient(std::vector<std::string> endpoints, int64_t timeout_ms, const Clock& clock,
                       std::shared_ptr<grpc::ChannelCredentials> credentials)
    : endpoints_(std::move(endpoints)), timeout_ms_(timeout_ms), clock_(clock) {
  if (!credentials) credentials = grpc::InsecureChannelCredentials();
  for (const auto& endpoint : endpoints_) {
    grpc::ChannelArguments args;
    // Reconnect soon after a member comes back; the defaults back off for up to two minutes.
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    args.SetMaxReceiveMessageSize(64 << 20);
    Member m;
    // Never through an HTTP proxy from the environment: etcd is reached directly.
    args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
    m.channel = grpc::CreateCustomChannel(endpoint, credentials, args);
    m.kv = etcdserverpb::KV::NewStub(m.channel);
    m.lease = etcdserverpb::Lease::NewStub(m.channel);
    m.watch = etcdserverpb::Watch::NewStub(m.channel);
    m.election = v3electionpb::Election::NewStub(m.channel);
    members_.push_back(std::move(m));
  }
}

template <typename Call>
Status EtcdClient::OnSomeMember(const char* what, int64_t timeout_ms, Call&& call) {
  std::string last;
  for (size_t attempt = 0; attempt < members_.size(); ++attempt) {
    const size_t i = current_.load() % members_.size();
    grpc::ClientContext context;
    context.set_deadline(DeadlineIn(timeout_ms));
    const grpc::Status s = call(members_[i], &context);
    if (s.ok()) return Status::Ok();
    last = endpoints_[i] + ": " + s.error_message();
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE &&
        s.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
      return Status(Code::kUnavailable, std::string("etcd ") + what + " failed at " + last);
    }
    size_t expected = i;
    current_.compare_exchange_strong(expected, (i + 1) % members_.size());
  }
  return Unavailable(std::string("etcd ") + what + ": no member answered (last: " + last + ")");
}

Result<etcdserverpb::RangeResponse> EtcdClient::Range(const etcdserverpb::RangeRequest& request) {
  etcdserverpb::RangeResponse response;
  SNN_RETURN_IF_ERROR(OnSomeMember("range", timeout_ms_, [&](Member& m, grpc::ClientContext* c) {
    return m.kv->Range(c, request, &response);
  }));
  return response;
}

Result<etcdserverpb::TxnResponse> EtcdClient::Txn(const etcdserverpb::TxnRequest& request) {
  etcdserverpb::TxnResponse response;
  SNN_RETURN_IF_ERROR(OnSomeMember("txn", timeout_ms_, [&](Member& m, grpc::ClientContext* c) {
    return m.kv->Txn(c, request, &response);
  }));
  return response;
}

Result<etcdserverpb::PutResponse> EtcdClient::Put(const etcdserverpb::PutRequest& request) {
  etcdserverpb::PutResponse response;
  SNN_RETURN_IF_ERROR(OnSomeMember("put", timeout_ms_, [&](Member& m, grpc::ClientContext* c) {
    return m.kv->Put(c, request, &response);
  }));
  return response;
}

Status EtcdClient::Compact(int64_t revision) {
  etcdserverpb::CompactionRequest request;
  request.set_revision(revision);
  etcdserverpb::CompactionResponse response;
  return OnSomeMember("compact", timeout_ms_, [&](Member& m, grpc::ClientContext* c) {
    grpc::Status s = m.kv->Compact(c, request, &response);
    // Compacted already (by another member's request or an earlier leader): done.
    if (!s.ok() && s.error_message().find("compacted") != std::string::npos) return grpc::Status();
    return s;
  });
}

Result<int64_t> EtcdClient::GrantLease(int64_t ttl_s) {
  etcdserverpb::LeaseGrantRequest request;
  request.set_ttl(ttl_s);
  etcdserverpb::LeaseGrantResponse response;
  SNN_RETURN_IF_ERROR(
      OnSomeMember("lease grant", timeout_ms_, [&](Member& m, grpc::ClientContext* c) {
        return m.lease->LeaseGrant(c, request, &response);
      }));
  if (!response.error().empty()) return Unavailable("etcd lease grant: " + response.error());
  return response.id();
}

Status EtcdClient::RevokeLease(int64_t lease) {
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(lease);
  etcdserverpb::LeaseRevokeResponse response;
  return OnSomeMember("lease revoke", timeout_ms_, [&](Member& m, grpc::ClientContext* c) {
    return m.lease->LeaseRevoke(c, request, &response);
  });
}

Result<int64_t> EtcdClient::KeepAliveOnce(int64_t lease) {
  etcdserverpb::LeaseKeepAliveResponse response;
  bool answered = false;
  SNN_RETURN_IF_ERROR(
      OnSomeMember("keep-alive", timeout_ms_, [&](Member& m, grpc::ClientContext* c) {
        auto stream = m.lease->LeaseKeepAlive(c);
        etcdserverpb::LeaseKeepAliveRequest request;
        request.set_id(lease);
        if (stream->Write(request) && stream->Read(&response)) answered = true;
        stream->WritesDone();
        const grpc::Status s = stream->Finish();
        return answered ? grpc::Status::OK : s;
      }));
  return response.ttl();
}

Result<v3electionpb::LeaderKey> EtcdClient::Campaign(const std::string& name, int64_t lease,
                                                     const std::string& value) {
  v3electionpb::CampaignRequest request;
  request.set_name(name);
  request.set_lease(lease);
  request.set_value(value);
  // The campaign waits as long as another leads; it is retried on the next member when the one
  // it waits at goes away.
  for (size_t attempt = 0;; ++attempt) {
    grpc::ClientContext context;
    {
      std::lock_guard lock(campaign_mu_);
      if (campaign_cancelled_) return Unavailable("campaign cancelled");
      campaign_ = &context;
    }
    const size_t i = current_.load() % members_.size();
    v3electionpb::CampaignResponse response;
    const grpc::Status s = members_[i].election->Campaign(&context, request, &response);
    {
      std::lock_guard lock(campaign_mu_);
      campaign_ = nullptr;
      if (campaign_cancelled_) return Unavailable("campaign cancelled");
    }
    if (s.ok()) return response.leader();
    LOG(WARNING) << "etcd campaign at " << endpoints_[i] << ": " << s.error_message();
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE) {
      return Unavailable("etcd campaign: " + s.error_message());
    }
    size_t expected = i;
    current_.compare_exchange_strong(expected, (i + 1) % members_.size());
    if (attempt + 1 >= members_.size()) clock_.SleepMs(200);
  }
}

void EtcdClient::CancelCampaign() {
  std::lock_guard lock(campaign_mu_);
  campaign_cancelled_ = true;
  if (campaign_ != nullptr) campaign_->TryCancel();
}

Result<std::optional<std::string>> EtcdClient::LeaderValue(const std::string& name) {
  v3electionpb::LeaderRequest request;
  request.set_name(name);
  v3electionpb::LeaderResponse response;
  std::optional<std::string> value;
  Status s = OnSomeMember("leader", timeout_ms_, [&](Member& m, grpc::ClientContext* c) {
    grpc::Status g = m.election->Leader(c, request, &response);
    // "election: no leader" is an answer, not a failure.
    if (!g.ok() && g.error_message().find("no leader") != std::string::npos) return grpc::Status();
    if (g.ok()) value = response.kv().value();
    return g;
  });
  if (!s.ok()) return s;
  return value;
}

Status EtcdClient::Resign(const v3electionpb::LeaderKey& leader) {
  v3electionpb::ResignRequest request;
  *request.mutable_leader() = leader;
  v3electionpb::ResignResponse response;
  return OnSomeMember("resign", timeout_ms_, [&](Member& m, grpc::ClientContext* c) {
    return m.election->Resign(c, request, &response);
  });
}

namespace {

class GrpcWatch : public EtcdWatch {
 public:
  bool Read(etcdserverpb::WatchResponse* response) override { return stream->Read(response); }
  void Cancel() override { context.TryCancel(); }

  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>>
      stream;
};

}  // namespace

Result<std::unique_ptr<EtcdWatch>> EtcdClient::StartWatch(const std::string& prefix,
                                                          int64_t start_revision) {
  const size_t i = current_.load() % members_.size();
  auto watch = std::make_unique<GrpcWatch>();
  watch->stream = members_[i].watch->Watch(&watch->context);
  etcdserverpb::WatchRequest request;
  auto* create = request.mutable_create_request();
  create->set_key(prefix);
  create->set_range_end(PrefixEnd(prefix));
  create->set_start_revision(start_revision);
  if (!watch->stream->Write(request)) {
    size_t expected = i;
    current_.compare_exchange_strong(expected, (i + 1) % members_.size());
    return Unavailable("etcd watch: cannot reach " + endpoints_[i]);
  }
  return std::unique_ptr<EtcdWatch>(std::move(watch));
}

}  // namespace snn
