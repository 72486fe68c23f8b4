#include "master/store/memory_store.h"

namespace snn {

Result<StoreRecords> MemoryStore::LoadAll() {
  std::lock_guard<std::mutex> lock(mu_);
  return StoreRecords(data_.begin(), data_.end());
}

void MemoryStore::Commit(StoreBatch batch, std::function<void(Status)> done) {
  Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_next_ > 0) {
      --fail_next_;
      status = Internal("injected store failure");
    } else {
      for (auto& w : batch) {
        if (w.value) {
          data_[w.key] = std::move(*w.value);
        } else {
          data_.erase(w.key);
        }
      }
    }
  }
  done(status);
}

void MemoryStore::FailNextCommits(int n) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_next_ = n;
}

size_t MemoryStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return data_.size();
}

}  // namespace snn
