// An in-memory Store for unit tests: commits synchronously on the caller's thread, and can be
// told to fail the next commits. Thread-safe.
#pragma once

#include <map>
#include <mutex>

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
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> data_;  // guarded by mu_
  int fail_next_ = 0;                        // guarded by mu_
};

}  // namespace snn
