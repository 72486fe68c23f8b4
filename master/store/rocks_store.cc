#include "master/store/rocks_store.h"

#include <glog/logging.h>
#include <rocksdb/write_batch.h>

#include <algorithm>

namespace snn {

Result<std::unique_ptr<RocksStore>> RocksStore::Open(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.max_background_jobs = 2;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &raw);
  if (!s.ok()) return Unavailable("cannot open the state store in " + dir + ": " + s.ToString());
  return std::unique_ptr<RocksStore>(new RocksStore(std::unique_ptr<rocksdb::DB>(raw)));
}

RocksStore::RocksStore(std::unique_ptr<rocksdb::DB> db)
    : db_(std::move(db)),
      queue_([this](StoreBatch merged, size_t callers,
                    std::function<void(Status)> finish) { finish(WriteGroup(merged, callers)); },
             Unavailable("state store is closed")) {}

RocksStore::~RocksStore() { Close(); }

Result<std::optional<std::string>> RocksStore::Get(const std::string& key) {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), key, &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (!s.ok()) return Internal("reading the state store: " + s.ToString());
  return std::optional<std::string>(std::move(value));
}

Status RocksStore::Scan(const std::string& prefix, const std::string& from,
                        const StoreVisitor& visit) {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(std::max(prefix, from)); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (!visit(std::string_view(it->key().data(), it->key().size()),
               std::string_view(it->value().data(), it->value().size()))) {
      break;
    }
  }
  if (!it->status().ok()) return Internal("reading the state store: " + it->status().ToString());
  return Status::Ok();
}

void RocksStore::Commit(StoreBatch batch, std::function<void(Status)> done) {
  queue_.Commit(std::move(batch), std::move(done));
}

Status RocksStore::WriteGroup(const StoreBatch& merged, size_t callers) {
  rocksdb::WriteBatch wb;
  for (const auto& w : merged) {
    if (w.value) {
      wb.Put(w.key, *w.value);
    } else {
      wb.Delete(w.key);
    }
  }
  if (wb.Count() == 0) return Status::Ok();
  rocksdb::WriteOptions sync_options;
  sync_options.sync = true;
  rocksdb::Status s = db_->Write(sync_options, &wb);
  std::lock_guard<std::mutex> lock(mu_);
  ++syncs_;
  batches_ += callers;
  if (!s.ok()) return Internal("state store write failed: " + s.ToString());
  return Status::Ok();
}

void RocksStore::Close() {
  queue_.Close();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
  }
  // A clean stop leaves nothing in the write-ahead log to replay: the next start reads tables.
  if (rocksdb::Status s = db_->Flush(rocksdb::FlushOptions()); !s.ok()) {
    LOG(WARNING) << "flushing the state store at stop: " << s.ToString();
  }
}

uint64_t RocksStore::sync_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return syncs_;
}

uint64_t RocksStore::batch_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batches_;
}

}  // namespace snn
