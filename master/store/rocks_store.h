// The RocksDB Store. Group commit: one writer thread takes every batch queued while the previous
// sync ran and writes them as one synced WriteBatch, then runs their callbacks in order.
// Thread contract: Commit from any thread; callbacks run on the writer thread.
#pragma once

#include <rocksdb/db.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

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
  void WriterLoop();

  struct Pending {
    StoreBatch batch;
    std::function<void(Status)> done;
  };

  // Constant after construction.
  std::unique_ptr<rocksdb::DB> db_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;  // guarded by mu_
  bool closing_ = false;       // guarded by mu_
  uint64_t syncs_ = 0;         // guarded by mu_
  uint64_t batches_ = 0;       // guarded by mu_
  std::thread writer_;
};

}  // namespace snn
