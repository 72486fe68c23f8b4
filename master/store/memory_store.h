// An in-memory Store for unit tests: commits synchronously on the caller's thread, and can be
// told to fail the next commits or to hold them (as a slow disk would) until released.
// Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "master/store/store.h"

namespace snn {

class MemoryStore : public Store {
 public:
  Result<std::optional<std::string>> Get(const std::string& key) override;
  Status Scan(const std::string& prefix, const std::string& from,
              const StoreVisitor& visit) override;
  void Commit(StoreBatch batch, std::function<void(Status)> done) override;
  void Close() override {}

  void FailNextCommits(int n);
  // From now on commits wait, in order, until ReleaseCommits applies them all and calls back.
  void HoldCommits();
  void ReleaseCommits();
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> data_;                               // guarded by mu_
  int fail_next_ = 0;                                                     // guarded by mu_
  bool hold_ = false;                                                     // guarded by mu_
  std::vector<std::pair<StoreBatch, std::function<void(Status)>>> held_;  // guarded by mu_
};

}  // namespace snn
