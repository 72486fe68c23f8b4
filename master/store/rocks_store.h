// The RocksDB Store. Group commit (group_commit.h): every batch queued while the previous sync ran
// goes into one synced WriteBatch, then their callbacks run in order.
// Thread contract: Commit from any thread; callbacks run on the writer thread.
#pragma once

#include <rocksdb/db.h>

#include <memory>
#include <mutex>

#include "master/store/group_commit.h"
#include "master/store/store.h"

namespace snn {

class RocksStore : public Store {
 public:
  // Opens (creating if needed) the database in `dir`.
  static Result<std::unique_ptr<RocksStore>> Open(const std::string& dir);
  ~RocksStore() override;

  Result<std::optional<std::string>> Get(const std::string& key) override;
  Status Scan(const std::string& prefix, const std::string& from,
              const StoreVisitor& visit) override;
  void Commit(StoreBatch batch, std::function<void(Status)> done) override;
  void Close() override;

  // How many synced writes were made, and how many batches they carried (for tests, benches).
  uint64_t sync_count() const;
  uint64_t batch_count() const;

 private:
  explicit RocksStore(std::unique_ptr<rocksdb::DB> db);
  // Writes one group as a synced WriteBatch (the commit queue's writer thread).
  Status WriteGroup(const StoreBatch& merged, size_t callers);

  // Constant after construction.
  std::unique_ptr<rocksdb::DB> db_;

  mutable std::mutex mu_;
  bool closed_ = false;     // guarded by mu_
  uint64_t syncs_ = 0;      // guarded by mu_
  uint64_t batches_ = 0;    // guarded by mu_
  GroupCommitQueue queue_;  // last: its writer stops before the rest goes
};

}  // namespace snn
