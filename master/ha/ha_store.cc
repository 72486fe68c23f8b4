#include "master/ha/ha_store.h"

#include <glog/logging.h>

#include "master/ha/replicated_log.h"
#include "master/store/journal.h"

namespace snn {

HaStore::HaStore(std::unique_ptr<Store> local, EtcdClient& etcd, std::string prefix,
                 std::function<bool()> lease_valid, std::function<void(const std::string&)> on_lost)
    : local_(std::move(local)),
      etcd_(etcd),
      prefix_(std::move(prefix)),
      lease_valid_(std::move(lease_valid)),
      on_lost_(std::move(on_lost)) {}

HaStore::~HaStore() { Close(); }

Result<std::optional<std::string>> HaStore::Get(const std::string& key) { return local_->Get(key); }

Status HaStore::Scan(const std::string& prefix, const std::string& from,
                     const StoreVisitor& visit) {
  return local_->Scan(prefix, from, visit);
}

void HaStore::Lead(HaLeadership leadership) {
  std::lock_guard lock(mu_);
  leadership_ = std::move(leadership);
  last_seq_ = leadership_.next_seq - 1;
  leading_ = true;
  writer_ = std::thread([this] { WriterLoop(); });
}

uint64_t HaStore::last_seq() const {
  std::lock_guard lock(mu_);
  return last_seq_;
}

void HaStore::Commit(StoreBatch batch, std::function<void(Status)> done) {
  std::unique_lock lock(mu_);
  if (!leading_) {
    lock.unlock();
    if (!batch.empty()) {
      done(FailedPrecondition("this master is a standby: it writes nothing"));
      return;
    }
    local_->Commit(std::move(batch), std::move(done));
    return;
  }
  if (closing_ || lost_) {
    lock.unlock();
    done(Unavailable("this master no longer leads"));
    return;
  }
  queue_.push_back(Pending{std::move(batch), std::move(done)});
  cv_.notify_one();
}

void HaStore::WriterLoop() {
  for (;;) {
    std::deque<Pending> group;
    uint64_t seq = 0;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;
      group.swap(queue_);
      seq = leadership_.next_seq;
    }
    StoreBatch merged;
    for (auto& p : group) {
      for (auto& w : p.batch) merged.push_back(std::move(w));
    }
    if (!merged.empty()) {
      merged.push_back(StoreWrite{kAppliedSeqKey, Hex16(seq)});
      if (!Replicate(merged, seq)) {
        for (auto& p : group) p.done(Unavailable("this master no longer leads"));
        std::unique_lock lock(mu_);
        lost_ = true;
        for (auto& p : queue_) p.done(Unavailable("this master no longer leads"));
        queue_.clear();
        return;
      }
      std::lock_guard lock(mu_);
      leadership_.next_seq = seq + 1;
      last_seq_ = seq;
    }
    auto dones = std::make_shared<std::vector<std::function<void(Status)>>>();
    for (auto& p : group) dones->push_back(std::move(p.done));
    local_->Commit(std::move(merged), [dones](Status s) {
      for (auto& d : *dones) d(s);
    });
  }
}

bool HaStore::Replicate(const StoreBatch& batch, uint64_t seq) {
  HaLeadership lead;
  {
    std::lock_guard lock(mu_);
    lead = leadership_;
  }
  for (auto& [key, value] : EncodeBatch(prefix_, batch, seq, lead.revision, max_chunk_bytes)) {
    etcdserverpb::TxnRequest txn;
    auto* fence = txn.add_compare();
    fence->set_key(lead.key);
    fence->set_target(etcdserverpb::Compare::CREATE);
    fence->set_result(etcdserverpb::Compare::EQUAL);
    fence->set_create_revision(lead.revision);
    auto* put = txn.add_success()->mutable_request_put();
    put->set_key(key);
    put->set_value(value);
    // The same chunk written twice (a retry after an unknown outcome) is the same record.
    for (;;) {
      auto response = etcd_.Txn(txn);
      if (response.ok()) {
        if (response->succeeded()) break;
        on_lost_("deposed: the leader key " + lead.key + " is no longer ours");
        return false;
      }
      if (!lease_valid_()) {
        on_lost_("cannot write to etcd within the lease (" + response.status().message() + ")");
        return false;
      }
      LOG(WARNING) << "replicating batch " << seq << ": " << response.status().message()
                   << "; retrying";
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return true;
}

void HaStore::Close() {
  {
    std::lock_guard lock(mu_);
    if (closing_) return;
    closing_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  local_->Close();
}

}  // namespace snn
