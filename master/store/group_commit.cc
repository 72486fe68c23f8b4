#include "master/store/group_commit.h"

#include <memory>
#include <vector>

namespace snn {

GroupCommitQueue::GroupCommitQueue(WriteGroup write, Status closed)
    : write_(std::move(write)), closed_(std::move(closed)) {
  writer_ = std::thread([this] { WriterLoop(); });
}

GroupCommitQueue::~GroupCommitQueue() { Close(); }

void GroupCommitQueue::Commit(StoreBatch batch, std::function<void(Status)> done) {
  Status refusal;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (refused_) {
      refusal = *refused_;
    } else if (closing_) {
      refusal = closed_;
    } else {
      queue_.push_back(Pending{std::move(batch), std::move(done)});
    }
  }
  if (!refusal.ok()) {
    done(refusal);
    return;
  }
  cv_.notify_one();
}

void GroupCommitQueue::Refuse(Status why) {
  std::deque<Pending> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!refused_) refused_ = why;
    dropped.swap(queue_);
  }
  for (auto& p : dropped) p.done(why);
}

void GroupCommitQueue::WriterLoop() {
  for (;;) {
    std::deque<Pending> group;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closing and drained
      group.swap(queue_);
    }
    StoreBatch merged;
    auto dones = std::make_shared<std::vector<std::function<void(Status)>>>();
    for (auto& p : group) {
      for (auto& w : p.batch) merged.push_back(std::move(w));
      dones->push_back(std::move(p.done));
    }
    write_(std::move(merged), dones->size(), [dones](Status s) {
      for (auto& done : *dones) done(s);
    });
  }
}

void GroupCommitQueue::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable() && writer_.get_id() != std::this_thread::get_id()) writer_.join();
}

}  // namespace snn
