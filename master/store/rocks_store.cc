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

RocksStore::RocksStore(std::unique_ptr<rocksdb::DB> db) : db_(std::move(db)) {
  writer_ = std::thread([this] { WriterLoop(); });
}

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
  bool closed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed = closing_;
    if (!closed) queue_.push_back(Pending{std::move(batch), std::move(done)});
  }
  if (closed) {
    done(Unavailable("state store is closed"));
    return;
  }
  cv_.notify_one();
}

void RocksStore::WriterLoop() {
  rocksdb::WriteOptions sync_options;
  sync_options.sync = true;
  while (true) {
    std::deque<Pending> group;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closing and drained
      group.swap(queue_);
    }
    rocksdb::WriteBatch wb;
    for (const auto& p : group) {
      for (const auto& w : p.batch) {
        if (w.value) {
          wb.Put(w.key, *w.value);
        } else {
          wb.Delete(w.key);
        }
      }
    }
    Status status;
    if (wb.Count() > 0) {
      rocksdb::Status s = db_->Write(sync_options, &wb);
      if (!s.ok()) status = Internal("state store write failed: " + s.ToString());
      std::lock_guard<std::mutex> lock(mu_);
      ++syncs_;
      batches_ += group.size();
    }
    for (auto& p : group) p.done(status);
  }
}

void RocksStore::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_ && !writer_.joinable()) return;
    closing_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
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
