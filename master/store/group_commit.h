// Group commit, for every store that writes durably: callers queue batches from any thread; one
// writer thread takes everything queued while the previous write ran, merges it in order, and
// writes it once (a RocksDB sync, an etcd transaction). Every caller of the group is then told
// the outcome, in the order they committed.
// Thread contract: Commit, Refuse and Close from any thread; `write` runs on the writer thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "master/store/store.h"

namespace snn {

class GroupCommitQueue {
 public:
  // Writes `merged` (the batches of `callers` commits, in order) and calls `finish` once with the
  // outcome for all of them, there or later from another thread.
  using WriteGroup =
      std::function<void(StoreBatch merged, size_t callers, std::function<void(Status)> finish)>;

  // Starts the writer. Commits after Close fail with `closed`.
  GroupCommitQueue(WriteGroup write, Status closed);
  ~GroupCommitQueue();
  GroupCommitQueue(const GroupCommitQueue&) = delete;
  GroupCommitQueue& operator=(const GroupCommitQueue&) = delete;

  void Commit(StoreBatch batch, std::function<void(Status)> done);
  // From now on every batch queued and every later one fails with `why` (the store can no
  // longer write); may be called from `write`.
  void Refuse(Status why);
  // Writes what is queued, then stops the writer. Later commits fail.
  void Close();

 private:
  struct Pending {
    StoreBatch batch;
    std::function<void(Status)> done;
  };
  void WriterLoop();

  const WriteGroup write_;
  const Status closed_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;      // guarded by mu_
  bool closing_ = false;           // guarded by mu_
  std::optional<Status> refused_;  // guarded by mu_
  std::thread writer_;
};

}  // namespace snn
