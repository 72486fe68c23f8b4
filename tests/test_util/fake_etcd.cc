#include "tests/test_util/fake_etcd.h"

#include <cstdio>

namespace snn {

namespace {

template <typename T>
bool Holds(etcdserverpb::Compare::CompareResult result, const T& have, const T& want) {
  switch (result) {
    case etcdserverpb::Compare::EQUAL:
      return have == want;
    case etcdserverpb::Compare::GREATER:
      return have > want;
    case etcdserverpb::Compare::LESS:
      return have < want;
    case etcdserverpb::Compare::NOT_EQUAL:
      return have != want;
    default:
      return false;
  }
}

Status Unreachable() { return Unavailable("fake etcd: no member answered"); }

}  // namespace

// ---- the server ----

bool FakeEtcdServer::InRange(const std::string& key, const std::string& from,
                             const std::string& end) const {
  if (end.empty()) return key == from;
  if (end == std::string(1, '\0')) return key >= from;
  return key >= from && key < end;
}

const etcdserverpb::KeyValue* FakeEtcdServer::Latest(const std::string& key,
                                                     int64_t at_revision) const {
  auto it = keys_.find(key);
  if (it == keys_.end()) return nullptr;
  for (auto v = it->second.rbegin(); v != it->second.rend(); ++v) {
    if (v->revision <= at_revision) return v->kv ? &*v->kv : nullptr;
  }
  return nullptr;
}

void FakeEtcdServer::BeginWrite() { write_open_ = false; }

void FakeEtcdServer::PutLocked(const std::string& key, const std::string& value, int64_t lease) {
  if (!write_open_) {
    ++revision_;
    write_open_ = true;
  }
  const etcdserverpb::KeyValue* old = Latest(key, revision_);
  etcdserverpb::KeyValue kv;
  kv.set_key(key);
  kv.set_value(value);
  kv.set_lease(lease);
  kv.set_mod_revision(revision_);
  kv.set_create_revision(old != nullptr ? old->create_revision() : revision_);
  kv.set_version(old != nullptr ? old->version() + 1 : 1);
  etcdserverpb::Event event;
  event.set_type(etcdserverpb::Event::PUT);
  *event.mutable_kv() = kv;
  events_.push_back(std::move(event));
  keys_[key].push_back(Version{revision_, std::move(kv)});
}

int64_t FakeEtcdServer::DeleteLocked(const std::string& key, const std::string& range_end) {
  std::vector<std::string> doomed;
  for (auto it = keys_.lower_bound(key); it != keys_.end(); ++it) {
    if (!InRange(it->first, key, range_end)) break;  // keys are sorted: past the range
    if (Latest(it->first, revision_) != nullptr) doomed.push_back(it->first);
  }
  for (const auto& k : doomed) {
    if (!write_open_) {
      ++revision_;
      write_open_ = true;
    }
    keys_[k].push_back(Version{revision_, std::nullopt});
    etcdserverpb::Event event;
    event.set_type(etcdserverpb::Event::DELETE);
    event.mutable_kv()->set_key(k);
    event.mutable_kv()->set_mod_revision(revision_);
    events_.push_back(std::move(event));
  }
  return static_cast<int64_t>(doomed.size());
}

void FakeEtcdServer::SetHeader(etcdserverpb::ResponseHeader* header) const {
  header->set_revision(revision_);
}

etcdserverpb::RangeResponse FakeEtcdServer::RangeLocked(
    const etcdserverpb::RangeRequest& request) const {
  const int64_t at = request.revision() > 0 ? request.revision() : revision_;
  etcdserverpb::RangeResponse response;
  SetHeader(response.mutable_header());
  int64_t count = 0;
  for (auto it = keys_.lower_bound(request.key()); it != keys_.end(); ++it) {
    if (!InRange(it->first, request.key(), request.range_end())) break;
    const etcdserverpb::KeyValue* kv = Latest(it->first, at);
    if (kv == nullptr) continue;
    ++count;
    if (request.limit() > 0 && response.kvs_size() >= request.limit()) {
      response.set_more(true);
      continue;
    }
    *response.add_kvs() = *kv;
  }
  response.set_count(count);
  return response;
}

bool FakeEtcdServer::CompareHolds(const etcdserverpb::Compare& c) const {
  const etcdserverpb::KeyValue* kv = Latest(c.key(), revision_);
  static const etcdserverpb::KeyValue kAbsent;
  const etcdserverpb::KeyValue& have = kv != nullptr ? *kv : kAbsent;
  switch (c.target()) {
    case etcdserverpb::Compare::VERSION:
      return Holds(c.result(), have.version(), c.version());
    case etcdserverpb::Compare::CREATE:
      return Holds(c.result(), have.create_revision(), c.create_revision());
    case etcdserverpb::Compare::MOD:
      return Holds(c.result(), have.mod_revision(), c.mod_revision());
    case etcdserverpb::Compare::VALUE:
      return Holds(c.result(), have.value(), c.value());
    case etcdserverpb::Compare::LEASE:
      return Holds(c.result(), have.lease(), c.lease());
    default:
      return false;
  }
}

etcdserverpb::TxnResponse FakeEtcdServer::TxnLocked(const etcdserverpb::TxnRequest& request) {
  bool succeeded = true;
  for (const auto& c : request.compare()) succeeded = succeeded && CompareHolds(c);
  etcdserverpb::TxnResponse response;
  response.set_succeeded(succeeded);
  for (const auto& op : succeeded ? request.success() : request.failure()) {
    auto* out = response.add_responses();
    if (op.has_request_put()) {
      PutLocked(op.request_put().key(), op.request_put().value(), op.request_put().lease());
      SetHeader(out->mutable_response_put()->mutable_header());
    } else if (op.has_request_delete_range()) {
      const auto& d = op.request_delete_range();
      out->mutable_response_delete_range()->set_deleted(DeleteLocked(d.key(), d.range_end()));
    } else if (op.has_request_range()) {
      *out->mutable_response_range() = RangeLocked(op.request_range());
    }
  }
  SetHeader(response.mutable_header());
  return response;
}

void FakeEtcdServer::EndLease(int64_t lease) {
  leases_.erase(lease);
  BeginWrite();
  std::vector<std::string> doomed;
  for (const auto& [key, versions] : keys_) {
    const etcdserverpb::KeyValue* kv = Latest(key, revision_);
    if (kv != nullptr && kv->lease() == lease) doomed.push_back(key);
  }
  for (const auto& key : doomed) DeleteLocked(key, "");
  changed_.notify_all();
}

void FakeEtcdServer::ExpireDueLeases() {
  const int64_t now = clock_.MonotonicMs();
  std::vector<int64_t> due;
  for (const auto& [id, lease] : leases_) {
    if (lease.expires_ms <= now) due.push_back(id);
  }
  for (int64_t id : due) EndLease(id);
}

const etcdserverpb::KeyValue* FakeEtcdServer::LeaderLocked(const std::string& name) const {
  const std::string prefix = name + "/";
  const etcdserverpb::KeyValue* leader = nullptr;
  for (auto it = keys_.lower_bound(prefix); it != keys_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    const etcdserverpb::KeyValue* kv = Latest(it->first, revision_);
    if (kv != nullptr && (leader == nullptr || kv->create_revision() < leader->create_revision())) {
      leader = kv;
    }
  }
  return leader;
}

bool FakeEtcdServer::DeposeLeader(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  const etcdserverpb::KeyValue* leader = LeaderLocked(name);
  if (leader == nullptr) return false;
  const std::string key = leader->key();
  BeginWrite();
  DeleteLocked(key, "");
  changed_.notify_all();
  return true;
}

void FakeEtcdServer::ExpireLease(int64_t lease) {
  std::lock_guard<std::mutex> lock(mu_);
  EndLease(lease);
}

int64_t FakeEtcdServer::LeaderLease(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  const etcdserverpb::KeyValue* leader = LeaderLocked(name);
  return leader != nullptr ? leader->lease() : 0;
}

std::optional<std::string> FakeEtcdServer::Value(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  const etcdserverpb::KeyValue* kv = Latest(key, revision_);
  if (kv == nullptr) return std::nullopt;
  return kv->value();
}

std::vector<std::string> FakeEtcdServer::KeysWithPrefix(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (auto it = keys_.lower_bound(prefix); it != keys_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    if (Latest(it->first, revision_) != nullptr) out.push_back(it->first);
  }
  return out;
}

int64_t FakeEtcdServer::revision() {
  std::lock_guard<std::mutex> lock(mu_);
  return revision_;
}

int64_t FakeEtcdServer::compacted_revision() {
  std::lock_guard<std::mutex> lock(mu_);
  return compacted_;
}

// ---- a connection ----

Status FakeEtcd::Reachable() const { return unreachable_ ? Unreachable() : Status::Ok(); }

template <typename Apply>
Status FakeEtcd::Write(std::unique_lock<std::mutex>& lock, Apply&& apply) {
  if (holding_) {
    ++held_;
    server_.changed_.notify_all();
    server_.changed_.wait(lock, [&] { return !holding_ || unreachable_; });
    --held_;
  }
  SNN_RETURN_IF_ERROR(Reachable());
  if (drop_before_ > 0) {
    --drop_before_;
    return Unavailable("fake etcd: the write was lost before it applied");
  }
  server_.ExpireDueLeases();
  server_.BeginWrite();
  apply();
  server_.changed_.notify_all();
  if (drop_after_ > 0) {
    --drop_after_;
    return Unavailable("fake etcd: the write applied but its answer was lost");
  }
  return Status::Ok();
}

void FakeEtcd::SetUnreachable(bool unreachable) {
  std::lock_guard<std::mutex> lock(server_.mu_);
  unreachable_ = unreachable;
  server_.changed_.notify_all();
}

void FakeEtcd::DropWritesBefore(int n) {
  std::lock_guard<std::mutex> lock(server_.mu_);
  drop_before_ = n;
}

void FakeEtcd::DropAnswersAfter(int n) {
  std::lock_guard<std::mutex> lock(server_.mu_);
  drop_after_ = n;
}

void FakeEtcd::HoldWrites() {
  std::lock_guard<std::mutex> lock(server_.mu_);
  holding_ = true;
}

void FakeEtcd::ReleaseWrites() {
  std::lock_guard<std::mutex> lock(server_.mu_);
  holding_ = false;
  server_.changed_.notify_all();
}

void FakeEtcd::PauseWatches(bool paused) {
  std::lock_guard<std::mutex> lock(server_.mu_);
  watches_paused_ = paused;
  server_.changed_.notify_all();
}

int FakeEtcd::held_writes() {
  std::lock_guard<std::mutex> lock(server_.mu_);
  return held_;
}

Result<etcdserverpb::RangeResponse> FakeEtcd::Range(const etcdserverpb::RangeRequest& request) {
  std::lock_guard<std::mutex> lock(server_.mu_);
  SNN_RETURN_IF_ERROR(Reachable());
  server_.ExpireDueLeases();
  if (request.revision() > 0 && request.revision() < server_.compacted_) {
    return Unavailable("etcdserver: mvcc: required revision has been compacted");
  }
  if (request.revision() > server_.revision_) {
    return Unavailable("etcdserver: mvcc: required revision is a future revision");
  }
  return server_.RangeLocked(request);
}

Result<etcdserverpb::TxnResponse> FakeEtcd::Txn(const etcdserverpb::TxnRequest& request) {
  std::unique_lock<std::mutex> lock(server_.mu_);
  etcdserverpb::TxnResponse response;
  SNN_RETURN_IF_ERROR(Write(lock, [&] { response = server_.TxnLocked(request); }));
  return response;
}

Result<etcdserverpb::PutResponse> FakeEtcd::Put(const etcdserverpb::PutRequest& request) {
  std::unique_lock<std::mutex> lock(server_.mu_);
  etcdserverpb::PutResponse response;
  SNN_RETURN_IF_ERROR(Write(lock, [&] {
    server_.PutLocked(request.key(), request.value(), request.lease());
    server_.SetHeader(response.mutable_header());
  }));
  return response;
}

Status FakeEtcd::Compact(int64_t revision) {
  std::lock_guard<std::mutex> lock(server_.mu_);
  SNN_RETURN_IF_ERROR(Reachable());
  if (revision <= server_.compacted_) return Status::Ok();  // EtcdClient: compacted already
  if (revision > server_.revision_) return Unavailable("fake etcd: compacting a future revision");
  for (auto it = server_.keys_.begin(); it != server_.keys_.end();) {
    auto& versions = it->second;
    size_t keep_from = 0;  // the version visible at `revision`, and every later one
    for (size_t i = 0; i < versions.size(); ++i) {
      if (versions[i].revision <= revision) keep_from = i;
    }
    versions.erase(versions.begin(), versions.begin() + static_cast<std::ptrdiff_t>(keep_from));
    if (!versions.empty() && versions.front().revision <= revision && !versions.front().kv) {
      versions.erase(versions.begin());
    }
    it = versions.empty() ? server_.keys_.erase(it) : std::next(it);
  }
  auto& events = server_.events_;
  std::erase_if(events,
                [&](const etcdserverpb::Event& e) { return e.kv().mod_revision() < revision; });
  server_.compacted_ = revision;
  server_.changed_.notify_all();
  return Status::Ok();
}

Result<int64_t> FakeEtcd::GrantLease(int64_t ttl_s) {
  std::lock_guard<std::mutex> lock(server_.mu_);
  SNN_RETURN_IF_ERROR(Reachable());
  const int64_t id = server_.next_lease_++;
  server_.leases_[id] = FakeEtcdServer::Lease{ttl_s, server_.clock_.MonotonicMs() + ttl_s * 1000};
  return id;
}

Status FakeEtcd::RevokeLease(int64_t lease) {
  std::lock_guard<std::mutex> lock(server_.mu_);
  SNN_RETURN_IF_ERROR(Reachable());
  server_.EndLease(lease);
  return Status::Ok();
}

Result<int64_t> FakeEtcd::KeepAliveOnce(int64_t lease) {
  std::lock_guard<std::mutex> lock(server_.mu_);
  SNN_RETURN_IF_ERROR(Reachable());
  server_.ExpireDueLeases();
  auto it = server_.leases_.find(lease);
  if (it == server_.leases_.end()) return int64_t{0};
  it->second.expires_ms = server_.clock_.MonotonicMs() + it->second.ttl_s * 1000;
  return it->second.ttl_s;
}

Result<v3electionpb::LeaderKey> FakeEtcd::Campaign(const std::string& name, int64_t lease,
                                                   const std::string& value) {
  std::unique_lock<std::mutex> lock(server_.mu_);
  char hex[24];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(lease));
  const std::string key = name + "/" + hex;
  for (;;) {
    if (campaign_cancelled_) return Unavailable("campaign cancelled");
    SNN_RETURN_IF_ERROR(Reachable());
    server_.ExpireDueLeases();
    if (server_.leases_.count(lease) == 0) {
      return Unavailable("etcdserver: requested lease not found");
    }
    const etcdserverpb::KeyValue* mine = server_.Latest(key, server_.revision_);
    if (mine == nullptr) {
      server_.BeginWrite();
      server_.PutLocked(key, value, lease);
      server_.changed_.notify_all();
      mine = server_.Latest(key, server_.revision_);
    }
    const etcdserverpb::KeyValue* leader = server_.LeaderLocked(name);
    if (leader != nullptr && leader->key() == key) {
      v3electionpb::LeaderKey out;
      out.set_name(name);
      out.set_key(key);
      out.set_rev(mine->create_revision());
      out.set_lease(lease);
      return out;
    }
    server_.changed_.wait(lock);
  }
}

void FakeEtcd::CancelCampaign() {
  std::lock_guard<std::mutex> lock(server_.mu_);
  campaign_cancelled_ = true;
  server_.changed_.notify_all();
}

Result<std::optional<std::string>> FakeEtcd::LeaderValue(const std::string& name) {
  std::lock_guard<std::mutex> lock(server_.mu_);
  SNN_RETURN_IF_ERROR(Reachable());
  server_.ExpireDueLeases();
  const etcdserverpb::KeyValue* leader = server_.LeaderLocked(name);
  if (leader == nullptr) return std::optional<std::string>();
  return std::optional<std::string>(leader->value());
}

Status FakeEtcd::Resign(const v3electionpb::LeaderKey& leader) {
  std::lock_guard<std::mutex> lock(server_.mu_);
  SNN_RETURN_IF_ERROR(Reachable());
  const etcdserverpb::KeyValue* kv = server_.Latest(leader.key(), server_.revision_);
  if (kv != nullptr && kv->create_revision() == leader.rev()) {
    server_.BeginWrite();
    server_.DeleteLocked(leader.key(), "");
    server_.changed_.notify_all();
  }
  return Status::Ok();
}

class FakeEtcdWatch : public EtcdWatch {
 public:
  FakeEtcdWatch(FakeEtcd& connection, std::string prefix, int64_t start_revision)
      : connection_(connection), prefix_(std::move(prefix)), next_(start_revision) {}

  bool Read(etcdserverpb::WatchResponse* response) override {
    FakeEtcdServer& server = connection_.server_;
    std::unique_lock<std::mutex> lock(server.mu_);
    const std::string end = PrefixEnd(prefix_);
    for (;;) {
      if (cancelled_ || connection_.unreachable_) return false;
      if (connection_.watches_paused_) {
        server.changed_.wait(lock);
        continue;
      }
      response->Clear();
      server.SetHeader(response->mutable_header());
      if (next_ < server.compacted_) {
        response->set_compact_revision(server.compacted_);
        response->set_canceled(true);
        return true;
      }
      int64_t last = 0;
      for (const auto& event : server.events_) {
        if (event.kv().mod_revision() < next_) continue;
        if (!server.InRange(event.kv().key(), prefix_, end)) continue;
        *response->add_events() = event;
        last = event.kv().mod_revision();
      }
      if (last != 0) {
        next_ = last + 1;
        return true;
      }
      server.changed_.wait(lock);
    }
  }

  void Cancel() override {
    std::lock_guard<std::mutex> lock(connection_.server_.mu_);
    cancelled_ = true;
    connection_.server_.changed_.notify_all();
  }

 private:
  FakeEtcd& connection_;
  const std::string prefix_;
  int64_t next_;            // guarded by the server's mu_
  bool cancelled_ = false;  // guarded by the server's mu_
};

Result<std::unique_ptr<EtcdWatch>> FakeEtcd::StartWatch(const std::string& prefix,
                                                        int64_t start_revision) {
  std::lock_guard<std::mutex> lock(server_.mu_);
  SNN_RETURN_IF_ERROR(Reachable());
  // 0: from the next revision on, as etcd does.
  const int64_t from = start_revision > 0 ? start_revision : server_.revision_ + 1;
  return std::unique_ptr<EtcdWatch>(std::make_unique<FakeEtcdWatch>(*this, prefix, from));
}

}  // namespace snn
