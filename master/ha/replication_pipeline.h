// The leader's side of the replicated log: up to `depth` batches in etcd transactions at once,
// completed strictly in the order of their numbers. A batch is handed on (applied locally, then
// acknowledged) only once it and every batch before it are in etcd; once one cannot be written,
// it and every later one fail, whatever became of their own transactions. So a gap in the log
// (batch N lost while N+1 landed) is never acknowledged past, and the next leader drops what
// follows it (HaMember::Campaign). A batch of several chunks is written alone, so that its chunks
// are consecutive in etcd's revision order, as followers read them.
// Thread contract: Submit from one thread (the group commit's writer); Close from any.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/base/status.h"
#include "master/store/store.h"

namespace snn {

class ReplicationPipeline {
 public:
  using Chunks = std::vector<std::pair<std::string, std::string>>;
  // Writes one batch's chunks to etcd (blocking, retrying as it sees fit); false once this
  // master can write no more. Runs on the pipeline's threads, up to `depth` at once.
  using Write = std::function<bool(uint64_t seq, const Chunks& chunks)>;
  // Takes a batch that is in etcd, with every one before it: called in the order of the
  // numbers, one at a time (seq 0: an empty batch, which wrote nothing).
  using Written = std::function<void(uint64_t seq, StoreBatch batch, std::function<void(Status)>)>;

  // `lost` is the failure of every batch from the first that could not be written on.
  ReplicationPipeline(size_t depth, Write write, Written written, Status lost);
  ~ReplicationPipeline();
  ReplicationPipeline(const ReplicationPipeline&) = delete;
  ReplicationPipeline& operator=(const ReplicationPipeline&) = delete;

  // Queues batch `seq` (0 and no chunks: an empty batch, passed on in its turn), then returns
  // once fewer than `depth` batches are being written and no batch of several chunks is (one
  // such waits to be queued until nothing else is written). `finish` gets the outcome: from
  // `written`, or `lost`.
  void Submit(uint64_t seq, StoreBatch batch, Chunks chunks, std::function<void(Status)> finish);
  // Whether a batch failed (every later one fails too).
  bool failed() const;
  // Lets what is being written end, fails what waits, stops the threads.
  void Close();

 private:
  enum class State { kQueued, kWriting, kWritten, kFailed };
  struct Entry {
    uint64_t seq = 0;
    StoreBatch batch;
    Chunks chunks;
    std::function<void(Status)> finish;
    State state = State::kQueued;
  };
  void WorkerLoop();
  // Hands on (or fails) the entries at the front that are done, in order.
  void Drain();

  const size_t depth_;
  const Write write_;
  const Written written_;
  const Status lost_;

  std::mutex drain_mu_;  // one Drain at a time: `written_` sees the batches in order
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Entry>> entries_;  // guarded by mu_: in order of submission
  size_t writing_ = 0;                          // guarded by mu_
  bool exclusive_ = false;  // guarded by mu_: a batch of several chunks is queued or writing
  bool failed_ = false;     // guarded by mu_: a write failed; nothing more is written
  bool broken_ = false;     // guarded by mu_: a failed batch was drained; all later ones fail
  bool closing_ = false;    // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace snn
