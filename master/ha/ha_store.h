// The Store of a master in --ha_etcd mode. It wraps the master's own RocksDB store: reads go
// to it; a standby's follower writes to it the batches the leader replicated. Once this master
// leads (Lead), every group of committed batches is first written to etcd's log in a
// transaction guarded by the leader key's revision, then applied locally, and only then are
// the callers told it is durable. Up to `max_in_flight` groups are in etcd transactions at once
// (ReplicationPipeline), acknowledged in order. A leader that can no longer write (deposed, or
// cut off from etcd past its lease) calls `on_lost` and writes nothing more.
// Group commit is the store's GroupCommitQueue (master/store/group_commit.h).
// Thread contract: Commit from any thread; callbacks run on the local store's writer thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>

#include "common/base/clock.h"
#include "master/ha/etcd.h"
#include "master/ha/replication_pipeline.h"
#include "master/store/group_commit.h"
#include "master/store/store.h"

namespace snn {

struct HaLeadership {
  std::string key;        // the leader key in etcd
  int64_t revision = 0;   // its create revision: the fence every write compares
  uint64_t next_seq = 1;  // the number of the next batch
};

class HaStore : public Store {
 public:
  // `lease_valid` says whether this master's lease is surely still alive; retries of a write
  // etcd did not answer pause on `clock`.
  HaStore(std::unique_ptr<Store> local, Etcd& etcd, const Clock& clock, std::string prefix,
          std::function<bool()> lease_valid, std::function<void(const std::string&)> on_lost);
  ~HaStore() override;

  Result<std::optional<std::string>> Get(const std::string& key) override;
  Status Scan(const std::string& prefix, const std::string& from,
              const StoreVisitor& visit) override;
  // Before Lead, only empty batches (barriers) are accepted: a standby changes nothing.
  void Commit(StoreBatch batch, std::function<void(Status)> done) override;
  void Close() override;

  // The store a standby's follower applies replicated batches to.
  Store& local() { return *local_; }
  // From now on this master writes the log.
  void Lead(HaLeadership leadership);
  // The number of the last batch written to etcd (0: none yet).
  uint64_t last_seq() const;

  size_t max_chunk_bytes = 1000 * 1000;  // below etcd's default request limit (1.5 MiB)
  // Groups in etcd transactions at once (set before Lead): each waits an etcd round (a raft
  // commit, fsyncs on a majority). More than one overlaps rounds that wait on the network; on
  // a host whose CPUs etcd shares, smaller groups only cost etcd more work per write.
  size_t max_in_flight = 1;

 private:
  // Numbers one group and hands it to the pipeline (the commit queue's writer thread).
  void WriteGroup(StoreBatch merged, std::function<void(Status)> finish);
  // Writes one batch's chunks to etcd; false once this master cannot write any more (the
  // pipeline's threads).
  bool Replicate(uint64_t seq, const ReplicationPipeline::Chunks& chunks);

  // Constant after construction.
  std::unique_ptr<Store> local_;
  Etcd& etcd_;
  const std::string prefix_;
  const std::function<bool()> lease_valid_;
  const std::function<void(const std::string&)> on_lost_;
  InterruptibleSleep retry_pause_;  // cut short by Close

  mutable std::mutex mu_;
  bool closing_ = false;                           // guarded by mu_
  HaLeadership leadership_;                        // guarded by mu_ (next_seq: the writer thread)
  uint64_t last_seq_ = 0;                          // guarded by mu_
  std::unique_ptr<ReplicationPipeline> pipeline_;  // set once by Lead (guarded by mu_)
  std::unique_ptr<GroupCommitQueue> queue_;        // likewise; feeds pipeline_
};

}  // namespace snn
