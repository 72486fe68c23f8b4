#include "master/store/memory_store.h"

#include <algorithm>

namespace snn {

Result<std::optional<std::string>> MemoryStore::Get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = data_.find(key);
  if (it == data_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Status MemoryStore::Scan(const std::string& prefix, const std::string& from,
                         const StoreVisitor& visit) {
  // Copies what it visits, so that `visit` may read the store too.
  std::vector<std::pair<std::string, std::string>> found;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = data_.lower_bound(std::max(prefix, from));
         it != data_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      found.emplace_back(it->first, it->second);
    }
  }
  for (const auto& [key, value] : found) {
    if (!visit(key, value)) break;
  }
  return Status::Ok();
}

void MemoryStore::Commit(StoreBatch batch, std::function<void(Status)> done) {
  Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (hold_) {
      held_.emplace_back(std::move(batch), std::move(done));
      return;
    }
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

void MemoryStore::HoldCommits() {
  std::lock_guard<std::mutex> lock(mu_);
  hold_ = true;
}

void MemoryStore::ReleaseCommits() {
  std::vector<std::pair<StoreBatch, std::function<void(Status)>>> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = false;
    held.swap(held_);
  }
  for (auto& [batch, done] : held) Commit(std::move(batch), std::move(done));
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
