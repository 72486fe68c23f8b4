#include "master/ha/ha_store.h"

#include <glog/logging.h>

#include "master/ha/replicated_log.h"
#include "master/store/journal.h"

namespace snn {

namespace {

Status NoLongerLeads() { return Unavailable("this master no longer leads"); }

}  // namespace

HaStore::HaStore(std::unique_ptr<Store> local, Etcd& etcd, const Clock& clock, std::string prefix,
                 std::function<bool()> lease_valid, std::function<void(const std::string&)> on_lost)
    : local_(std::move(local)),
      etcd_(etcd),
      prefix_(std::move(prefix)),
      lease_valid_(std::move(lease_valid)),
      on_lost_(std::move(on_lost)),
      retry_pause_(clock) {}

HaStore::~HaStore() { Close(); }

Result<std::optional<std::string>> HaStore::Get(const std::string& key) { return local_->Get(key); }

Status HaStore::Scan(const std::string& prefix, const std::string& from,
                     const StoreVisitor& visit) {
  return local_->Scan(prefix, from, visit);
}

void HaStore::Lead(HaLeadership leadership) {
  std::lock_guard lock(mu_);
  if (closing_ || queue_) return;
  leadership_ = std::move(leadership);
  last_seq_ = leadership_.next_seq - 1;
  pipeline_ = std::make_unique<ReplicationPipeline>(
      max_in_flight,
      [this](uint64_t seq, const ReplicationPipeline::Chunks& chunks) {
        if (Replicate(seq, chunks)) return true;
        std::lock_guard lock(mu_);
        if (queue_) queue_->Refuse(NoLongerLeads());
        return false;
      },
      [this](uint64_t seq, StoreBatch batch, std::function<void(Status)> finish) {
        if (seq != 0) {
          std::lock_guard lock(mu_);
          last_seq_ = seq;
        }
        local_->Commit(std::move(batch), std::move(finish));
      },
      NoLongerLeads());
  queue_ = std::make_unique<GroupCommitQueue>(
      [this](StoreBatch merged, size_t, std::function<void(Status)> finish) {
        WriteGroup(std::move(merged), std::move(finish));
      },
      NoLongerLeads());
}

uint64_t HaStore::last_seq() const {
  std::lock_guard lock(mu_);
  return last_seq_;
}

void HaStore::Commit(StoreBatch batch, std::function<void(Status)> done) {
  GroupCommitQueue* queue = nullptr;
  bool closing = false;
  {
    std::lock_guard lock(mu_);
    queue = queue_.get();
    closing = closing_;
  }
  if (queue != nullptr) {
    queue->Commit(std::move(batch), std::move(done));
  } else if (closing) {
    done(Unavailable("state store is closed"));
  } else if (!batch.empty()) {
    done(FailedPrecondition("this master is a standby: it writes nothing"));
  } else {
    local_->Commit(std::move(batch), std::move(done));
  }
}

void HaStore::WriteGroup(StoreBatch merged, std::function<void(Status)> finish) {
  if (merged.empty()) {  // a barrier: answered in its turn, after every group before it
    pipeline_->Submit(0, {}, {}, std::move(finish));
    return;
  }
  uint64_t seq = 0;
  int64_t epoch = 0;
  {
    std::lock_guard lock(mu_);
    seq = leadership_.next_seq++;
    epoch = leadership_.revision;
  }
  merged.push_back(StoreWrite{kAppliedSeqKey, Hex16(seq)});
  auto chunks = EncodeBatch(prefix_, merged, seq, epoch, max_chunk_bytes);
  pipeline_->Submit(seq, std::move(merged), std::move(chunks), std::move(finish));
}

bool HaStore::Replicate(uint64_t seq, const ReplicationPipeline::Chunks& chunks) {
  HaLeadership lead;
  {
    std::lock_guard lock(mu_);
    lead = leadership_;
  }
  for (const auto& [key, value] : chunks) {
    etcdserverpb::TxnRequest txn = FencedTxn(lead.key, lead.revision);
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
      if (!retry_pause_.SleepMs(50)) {
        on_lost_("stopping while etcd does not answer (" + response.status().message() + ")");
        return false;
      }
    }
  }
  return true;
}

void HaStore::Close() {
  GroupCommitQueue* queue = nullptr;
  ReplicationPipeline* pipeline = nullptr;
  {
    std::lock_guard lock(mu_);
    if (closing_) return;
    closing_ = true;
    queue = queue_.get();
    pipeline = pipeline_.get();
  }
  retry_pause_.Interrupt();
  if (queue != nullptr) queue->Close();
  if (pipeline != nullptr) pipeline->Close();
  local_->Close();
}

}  // namespace snn
