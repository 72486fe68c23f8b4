#include "master/ha/ha_member.h"

#include <glog/logging.h>

#include <future>

#include "common/rpc/rpc_client.h"
#include "common/rpc/tls.h"
#include "master/store/journal.h"
#include "proto/ha.pb.h"

namespace snn {

namespace {

Status CommitAndWait(Store& store, StoreBatch batch) {
  std::promise<Status> done;
  store.Commit(std::move(batch), [&](Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}
}  // namespace

HaMember::HaMember(Etcd& etcd, HaStore& store, const Clock& clock, HaOptions options,
                   std::function<void(const std::string&)> on_lost)
    : etcd_(etcd),
      store_(store),
      clock_(clock),
      options_(std::move(options)),
      on_lost_(std::move(on_lost)),
      pause_(clock) {}

HaMember::~HaMember() { Stop(); }

Status HaMember::Start() {
  auto applied = ReadAppliedSeq(store_.local());
  if (!applied.ok()) return applied.status();
  auto mark = store_.local().Get(kSnapshotMarkKey);
  if (!mark.ok()) return mark.status();
  // A snapshot cut off before its end: the store holds part of one. The log from its start,
  // or a new snapshot, makes it whole.
  applied_ = *mark ? 0 : *applied;
  const int64_t asked = clock_.MonotonicMs();
  auto lease = etcd_.GrantLease(options_.lease_ttl_s);
  if (!lease.ok()) return lease.status();
  lease_ = *lease;
  lease_renewed_ms_ = asked;
  following_ = true;
  ReportApplied(/*now=*/true);  // the log is kept from here for this master from now on
  keepalive_ = std::thread([this] { KeepAliveLoop(); });
  guard_ = std::thread([this] { GuardLoop(); });
  follower_ = std::thread([this] { FollowLoop(); });
  leader_watch_ = std::thread([this] { LeaderWatchLoop(); });
  LOG(INFO) << "ha: member " << options_.member << " standing by (lease " << lease_
            << ", applied batch " << applied_ << ")";
  return Status::Ok();
}

bool HaMember::LeaseValid() const {
  const int64_t ttl_ms = options_.lease_ttl_s * 1000;
  const int64_t margin_ms = std::max<int64_t>(500, ttl_ms / 5);
  return clock_.MonotonicMs() - lease_renewed_ms_.load() < ttl_ms - margin_ms;
}

std::string HaMember::leader_address() const {
  std::lock_guard lock(mu_);
  return leader_address_;
}

void HaMember::KeepAliveLoop() {
  const int64_t interval = options_.lease_ttl_s * 1000 / 3;
  while (Sleep(interval)) {
    const int64_t sent = clock_.MonotonicMs();
    auto ttl = etcd_.KeepAliveOnce(lease_);
    if (stopping_) return;
    if (ttl.ok() && *ttl > 0) {
      lease_renewed_ms_ = sent;
    } else if (ttl.ok()) {
      on_lost_("ha: the lease expired in etcd");
      return;
    } else {
      LOG(WARNING) << "ha: renewing the lease: " << ttl.status().message();
    }
    if (!LeaseValid()) {
      on_lost_("ha: the lease could not be renewed in time; etcd is out of reach");
      return;
    }
  }
}

void HaMember::GuardLoop() {
  while (Sleep(50)) {
    if (!LeaseValid()) {
      on_lost_("ha: the lease was not renewed in time; etcd is out of reach");
      return;
    }
  }
}

void HaMember::LeaderWatchLoop() {
  do {
    if (leading_ && !StillLeads()) {
      on_lost_("ha: deposed: the leader key " + leader_key_.key() + " is no longer ours");
      return;
    }
    auto value = etcd_.LeaderValue(LeaderElectionName(options_.prefix));
    if (value.ok() && !leading_) {
      std::lock_guard lock(mu_);
      leader_address_ = value->value_or("");
    }
  } while (Sleep(300));
}

bool HaMember::StillLeads() {
  etcdserverpb::RangeRequest request;
  request.set_key(leader_key_.key());
  auto key = etcd_.Range(request);
  if (!key.ok()) return true;  // unknown: the lease guard ends a leader cut off from etcd
  return key->kvs_size() == 1 && key->kvs(0).create_revision() == leader_key_.rev();
}

Status HaMember::Apply(LogAssembler::Batch batch) {
  if (batch.seq <= applied_.load()) return Status::Ok();  // seen already (a retried write)
  // A later leader's batch: what an earlier one left beyond a gap is no longer in the log.
  std::erase_if(early_, [&](const auto& kept) { return kept.second.epoch < batch.epoch; });
  if (batch.seq != applied_.load() + 1) {
    // The leader has batches in flight; those before this one land soon.
    constexpr size_t kMaxEarly = 4096;
    if (early_.size() >= kMaxEarly) {
      return Unavailable("ha: " + std::to_string(early_.size()) + " batches wait for batch " +
                         std::to_string(applied_.load() + 1) + ", which does not come");
    }
    early_.insert_or_assign(batch.seq, std::move(batch));
    return Status::Ok();
  }
  for (;;) {
    const uint64_t seq = batch.seq;
    store_.local().Commit(std::move(batch.writes), [](Status s) {
      if (!s.ok()) LOG(FATAL) << "ha: cannot apply a replicated batch: " << s.ToString();
    });
    applied_ = seq;
    auto next = early_.find(seq + 1);
    if (next == early_.end()) break;
    batch = std::move(next->second);
    early_.erase(next);
  }
  std::erase_if(early_, [&](const auto& kept) { return kept.first <= applied_.load(); });
  return Status::Ok();
}

Status HaMember::DropLogTail() {
  etcdserverpb::TxnRequest txn = FencedTxn(leader_key_.key(), leader_key_.rev());
  auto* erase = txn.add_success()->mutable_request_delete_range();
  erase->set_key(LogSeqKey(options_.prefix, applied_.load() + 1));
  erase->set_range_end(PrefixEnd(LogPrefix(options_.prefix)));
  auto done = etcd_.Txn(txn);
  if (!done.ok()) return done.status();
  if (!done->succeeded()) return Unavailable("deposed before leading: the leader key is gone");
  const int64_t dropped =
      done->responses().empty() ? 0 : done->responses(0).response_delete_range().deleted();
  if (dropped > 0) {
    LOG(WARNING) << "ha: dropped " << dropped << " chunks of the log past batch " << applied_.load()
                 << ": written beyond a gap by the previous leader, never "
                 << "acknowledged";
  }
  early_.clear();
  return Status::Ok();
}

Status HaMember::TakeSnapshot() {
  const std::string leader = leader_address();
  if (leader.empty()) return Unavailable("no leader to copy the store from yet");
  if (options_.tls_dir.empty()) {
    return FailedPrecondition(
        "with --auth=none a standby cannot fetch a snapshot: start it again on a copy of "
        "another master's --data_dir");
  }
  auto address = ParseHostPort(leader);
  if (!address.ok()) return address.status();
  const std::string dir = options_.tls_dir + "/";
  auto tls = MakeClientTls({dir + "ca.crt", dir + "master.crt", dir + "master.key"});
  if (!tls.ok()) return tls.status();
  RpcClient client(std::chrono::seconds(30));
  client.set_tls(*tls);
  if (Status s = client.Connect(*address); !s.ok()) {
    return Status(s.code(), s.message() +
                                " (the masters' certificate must allow client use: one made "
                                "before HA existed does not; make it again with snn-ca master)");
  }
  LOG(WARNING) << "ha: this master is behind the log kept in etcd (at batch " << applied_.load()
               << "); copying the leader's store from " << leader;
  Store& local = store_.local();
  SNN_RETURN_IF_ERROR(CommitAndWait(
      local, {StoreWrite{kSnapshotMarkKey, "1"}, StoreWrite{kAppliedSeqKey, std::nullopt}}));
  applied_ = 0;
  early_.clear();
  // Empty the store (but for the mark).
  std::string from;
  for (;;) {
    StoreBatch erase;
    SNN_RETURN_IF_ERROR(local.Scan("", from, [&](std::string_view key, std::string_view) {
      if (key != kSnapshotMarkKey) erase.push_back(StoreWrite{std::string(key), std::nullopt});
      return erase.size() < 10000;
    }));
    if (erase.empty()) break;
    from = erase.back().key + std::string(1, '\0');
    SNN_RETURN_IF_ERROR(CommitAndWait(local, std::move(erase)));
  }
  // Copy the leader's pages, then take its position at the first page.
  v1::HaSnapshotRequest request;
  std::optional<uint64_t> position;
  size_t records = 0;
  for (;;) {
    auto page = client.Call(rpc::kHaSnapshot, request);
    if (!page.ok()) return page.status();
    if (!position) position = page->applied_seq();
    StoreBatch writes;
    for (auto& r : *page->mutable_records()) {
      writes.push_back(StoreWrite{std::move(*r.mutable_key()), std::move(*r.mutable_value())});
    }
    records += writes.size();
    if (!writes.empty()) {
      request.set_after_key(writes.back().key);
      SNN_RETURN_IF_ERROR(CommitAndWait(local, std::move(writes)));
    }
    if (!page->more()) break;
    if (stopping_) return Unavailable("stopping");
  }
  SNN_RETURN_IF_ERROR(CommitAndWait(local, {StoreWrite{kAppliedSeqKey, Hex16(*position)},
                                            StoreWrite{kSnapshotMarkKey, std::nullopt}}));
  applied_ = *position;
  LOG(WARNING) << "ha: copied " << records << " records from the leader; following the log from "
               << "batch " << *position + 1;
  return Status::Ok();
}

Result<int64_t> HaMember::CatchUp(LogAssembler& assembler) {
  // Where the log starts, and the revision every page is read at.
  etcdserverpb::RangeRequest floor_request;
  floor_request.set_key(LogFloorKey(options_.prefix));
  auto floor = etcd_.Range(floor_request);
  if (!floor.ok()) return floor.status();
  const int64_t revision = floor->header().revision();
  if (floor->kvs_size() == 1) {
    const uint64_t first = std::strtoull(floor->kvs(0).value().c_str(), nullptr, 16);
    if (applied_.load() + 1 < first) {
      return FailedPrecondition("ha: this master has applied batch " +
                                std::to_string(applied_.load()) + " but the log starts at " +
                                std::to_string(first) +
                                "; the batches between were compacted "
                                "away");
    }
  }
  etcdserverpb::RangeRequest request;
  request.set_key(LogSeqKey(options_.prefix, applied_.load() + 1));
  request.set_range_end(PrefixEnd(LogPrefix(options_.prefix)));
  request.set_limit(256);
  request.set_revision(revision);
  for (;;) {
    auto page = etcd_.Range(request);
    if (!page.ok()) return page.status();
    for (const auto& kv : page->kvs()) {
      auto batch = assembler.Feed(kv.value());
      if (!batch.ok()) return batch.status();
      if (*batch) SNN_RETURN_IF_ERROR(Apply(std::move(**batch)));
    }
    if (!page->more() || page->kvs().empty()) break;
    request.set_key(page->kvs().rbegin()->key() + std::string(1, '\0'));
  }
  return revision;
}

void HaMember::ReportApplied(bool now) {
  // What this master's own store holds (a leader's writes reach etcd a little before its
  // store): the log is kept from there for it, should it stop and come back.
  uint64_t applied = applied_.load();
  if (leading_) {
    auto local = ReadAppliedSeq(store_.local());
    if (!local.ok()) return;
    applied = *local;
  }
  const int64_t at = clock_.MonotonicMs();
  if (!now && (applied == reported_seq_ || at - reported_at_ms_ < 1000)) return;
  etcdserverpb::PutRequest put;
  put.set_key(AppliedKey(options_.prefix, options_.member));
  put.set_value(std::to_string(applied));
  if (etcd_.Put(put).ok()) {
    reported_seq_ = applied;
    reported_at_ms_ = at;
  }
}

void HaMember::FollowLoop() {
  LogAssembler assembler;
  while (following_ && !stopping_) {
    auto revision = CatchUp(assembler);
    if (!revision.ok()) {
      if (revision.status().code() == Code::kFailedPrecondition) {
        LOG(WARNING) << revision.status().message();
        if (Status s = TakeSnapshot(); !s.ok()) {
          LOG(WARNING) << "ha: copying the leader's store: " << s.message() << "; trying again";
          Sleep(1000);
        }
        assembler = LogAssembler();
        continue;
      }
      LOG(WARNING) << "ha: reading the log: " << revision.status().message();
      Sleep(500);
      continue;
    }
    ReportApplied();
    auto watch = etcd_.StartWatch(LogPrefix(options_.prefix), *revision + 1);
    if (!watch.ok()) {
      Sleep(200);
      continue;
    }
    {
      std::lock_guard lock(mu_);
      if (!following_ || stopping_) return;
      watch_ = watch->get();
    }
    etcdserverpb::WatchResponse response;
    bool resync = false;
    while (!resync && (*watch)->Read(&response)) {
      if (response.canceled() || response.compact_revision() != 0) break;
      for (const auto& event : response.events()) {
        if (event.type() != etcdserverpb::Event::PUT) continue;
        auto batch = assembler.Feed(event.kv().value());
        Status s =
            batch.ok() ? (*batch ? Apply(std::move(**batch)) : Status::Ok()) : batch.status();
        if (!s.ok()) {
          LOG(WARNING) << "ha: " << s.message() << "; reading the log again";
          resync = true;
          break;
        }
      }
      ReportApplied();
    }
    {
      std::lock_guard lock(mu_);
      watch_ = nullptr;
    }
    (*watch)->Cancel();
    if (following_ && !stopping_) Sleep(50);
  }
}

Status HaMember::Campaign() {
  auto leader = etcd_.Campaign(LeaderElectionName(options_.prefix), lease_, options_.advertise);
  if (!leader.ok()) return leader.status();
  leader_key_ = *leader;
  const int64_t elected_ms = clock_.MonotonicMs();
  {
    std::lock_guard lock(mu_);
    following_ = false;
    if (watch_ != nullptr) watch_->Cancel();
  }
  if (follower_.joinable()) follower_.join();
  // Whatever the previous leader wrote is in the log now (its writes are fenced off): apply it.
  LogAssembler assembler;
  auto revision = CatchUp(assembler);
  if (!revision.ok()) return revision.status();
  SNN_RETURN_IF_ERROR(DropLogTail());
  // Whole now (the log from its start was applied over an unfinished snapshot, if any).
  SNN_RETURN_IF_ERROR(CommitAndWait(store_.local(), {StoreWrite{kSnapshotMarkKey, std::nullopt}}));
  store_.Lead(HaLeadership{leader_key_.key(), leader_key_.rev(), applied_.load() + 1});
  leading_ = true;
  {
    std::lock_guard lock(mu_);
    leader_address_ = options_.advertise;
  }
  ReportApplied(/*now=*/true);
  compactor_ = std::thread([this] { CompactLoop(); });
  LOG(INFO) << "ha: " << options_.member << " leads (epoch " << leader_key_.rev()
            << ", log applied to batch " << applied_.load() << " in "
            << clock_.MonotonicMs() - elected_ms << " ms)";
  return Status::Ok();
}

void HaMember::CompactLoop() {
  uint64_t floor_marked = 0;
  while (Sleep(options_.compact_interval_ms)) {
    ReportApplied();
    etcdserverpb::RangeRequest request;
    const std::string applied_prefix = AppliedKey(options_.prefix, "");
    request.set_key(applied_prefix);
    request.set_range_end(PrefixEnd(applied_prefix));
    auto members = etcd_.Range(request);
    if (!members.ok()) continue;
    const uint64_t last = store_.last_seq();
    uint64_t floor = last;
    for (const auto& kv : members->kvs()) {
      try {
        floor = std::min<uint64_t>(floor, std::stoull(kv.value()));
      } catch (const std::exception&) {
      }
    }
    if (last > options_.max_log_batches) {
      floor = std::max<uint64_t>(floor, last - options_.max_log_batches);
    }
    if (floor <= floor_marked) continue;
    etcdserverpb::TxnRequest txn = FencedTxn(leader_key_.key(), leader_key_.rev());
    auto* erase = txn.add_success()->mutable_request_delete_range();
    erase->set_key(LogPrefix(options_.prefix));
    erase->set_range_end(LogSeqKey(options_.prefix, floor));  // keeps batch `floor` and later
    auto* mark = txn.add_success()->mutable_request_put();
    mark->set_key(LogFloorKey(options_.prefix));
    mark->set_value(Hex16(floor));
    auto done = etcd_.Txn(txn);
    if (done.ok() && done->succeeded()) floor_marked = floor;
    if (done.ok() && done->succeeded() && !done->responses().empty() &&
        done->responses(0).response_delete_range().deleted() > 0) {
      // etcd keeps every revision until compacted: drop the history of the deleted batches
      // (a standby watching from before it reads the log again from its own position).
      const int64_t revision = done->header().revision();
      if (auto s = etcd_.Compact(revision); !s.ok()) {
        LOG(WARNING) << "ha: compacting etcd's history: " << s.message();
      }
      VLOG(1) << "ha: log compacted below batch " << floor << " (etcd revision " << revision << ")";
    }
  }
}

void HaMember::Stop() {
  if (stopping_.exchange(true)) return;
  etcd_.CancelCampaign();
  {
    std::lock_guard lock(mu_);
    following_ = false;
    if (watch_ != nullptr) watch_->Cancel();
  }
  pause_.Interrupt();
  for (auto* t : {&keepalive_, &guard_, &follower_, &leader_watch_, &compactor_}) {
    if (t->joinable()) t->join();
  }
  if (leading_) {
    if (auto s = etcd_.Resign(leader_key_); !s.ok()) LOG(WARNING) << "ha: resign: " << s.message();
  }
  if (lease_ != 0) {
    if (auto s = etcd_.RevokeLease(lease_); !s.ok()) {
      LOG(WARNING) << "ha: revoking the lease: " << s.message();
    }
  }
}

}  // namespace snn
