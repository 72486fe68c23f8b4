#include "master/ha/replication_pipeline.h"

#include <algorithm>

namespace snn {

ReplicationPipeline::ReplicationPipeline(size_t depth, Write write, Written written, Status lost)
    : depth_(std::max<size_t>(1, depth)),
      write_(std::move(write)),
      written_(std::move(written)),
      lost_(std::move(lost)) {
  for (size_t i = 0; i < depth_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ReplicationPipeline::~ReplicationPipeline() { Close(); }

bool ReplicationPipeline::failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

void ReplicationPipeline::Submit(uint64_t seq, StoreBatch batch, Chunks chunks,
                                 std::function<void(Status)> finish) {
  auto entry = std::make_shared<Entry>();
  entry->seq = seq;
  entry->batch = std::move(batch);
  entry->chunks = std::move(chunks);
  entry->finish = std::move(finish);
  const bool empty = entry->chunks.empty();
  const bool alone = entry->chunks.size() > 1;
  if (empty) entry->state = State::kWritten;
  bool refused = false;
  {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [&] {
      return closing_ || failed_ || empty || (!exclusive_ && (!alone || writing_ == 0));
    });
    refused = closing_ || failed_;
    if (!refused) {
      if (alone) exclusive_ = true;
      if (!empty) ++writing_;
      entries_.push_back(entry);
    }
  }
  if (refused) {
    entry->finish(lost_);
    return;
  }
  changed_.notify_all();
  if (empty) Drain();
  // The caller forms its next group only once a write can take it: whatever is committed
  // meanwhile joins that group, so groups stay as large as with one write at a time.
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return closing_ || failed_ || (!exclusive_ && writing_ < depth_); });
}

void ReplicationPipeline::WorkerLoop() {
  for (;;) {
    std::shared_ptr<Entry> entry;
    bool skip = false;
    {
      std::unique_lock lock(mu_);
      auto queued = [&] {
        return std::find_if(entries_.begin(), entries_.end(),
                            [](const auto& e) { return e->state == State::kQueued; });
      };
      changed_.wait(lock, [&] { return closing_ || queued() != entries_.end(); });
      auto it = queued();
      if (it == entries_.end()) return;  // closing, nothing left to write
      entry = *it;
      entry->state = State::kWriting;
      skip = failed_ || closing_;  // what follows a failure is not written
    }
    const bool ok = !skip && write_(entry->seq, entry->chunks);
    {
      std::lock_guard lock(mu_);
      entry->state = ok ? State::kWritten : State::kFailed;
      if (!ok) failed_ = true;
      --writing_;
      if (entry->chunks.size() > 1) exclusive_ = false;
    }
    changed_.notify_all();
    Drain();
  }
}

void ReplicationPipeline::Drain() {
  std::lock_guard drain(drain_mu_);
  for (;;) {
    std::shared_ptr<Entry> entry;
    bool fail = false;
    {
      std::lock_guard lock(mu_);
      if (entries_.empty()) return;
      entry = entries_.front();
      if (entry->state == State::kQueued || entry->state == State::kWriting) return;
      entries_.pop_front();
      // A failure fails everything after it, written or not: acknowledgements never pass a gap.
      if (entry->state == State::kFailed) broken_ = true;
      fail = broken_;
    }
    changed_.notify_all();
    if (fail) {
      entry->finish(lost_);
    } else {
      written_(entry->seq, std::move(entry->batch), std::move(entry->finish));
    }
  }
}

void ReplicationPipeline::Close() {
  {
    std::lock_guard lock(mu_);
    if (closing_) return;
    closing_ = true;
    for (auto& entry : entries_) {
      if (entry->state == State::kQueued) {
        entry->state = State::kFailed;
        --writing_;
      }
    }
  }
  changed_.notify_all();
  for (auto& worker : workers_) {
    if (worker.joinable() && worker.get_id() != std::this_thread::get_id()) worker.join();
  }
  Drain();
}

}  // namespace snn
