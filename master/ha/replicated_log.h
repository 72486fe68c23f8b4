// The replicated log of the master's --ha_etcd mode, as stored in etcd: the key layout, the
// encoding of a store batch into chunks (each fits one etcd request) and their reassembly.
//   <prefix>leader                       the election (etcd's election API)
//   <prefix>log/<seq>/<epoch>/<part>     chunks of batch number <seq> (16 hex digits each)
//   <prefix>applied/<member>             the last batch that member applied (for compaction)
//   <prefix>log_floor                    the first batch the log still holds (16 hex digits)
// The leader has several batches in flight at once, so they may land out of order (N+1 before
// N): followers wait for the gap to fill, and a new leader drops whatever follows a gap.
// Every master keeps the number of the last batch it applied in its own store
// (master/store/replica_position.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/base/status.h"
#include "etcd_kv.pb.h"
#include "master/store/replica_position.h"
#include "master/store/store.h"
#include "proto/ha.pb.h"

namespace snn {

std::string LogPrefix(const std::string& prefix);
// The first key of batch `seq` (any epoch, any part).
std::string LogSeqKey(const std::string& prefix, uint64_t seq);
std::string LogChunkKey(const std::string& prefix, uint64_t seq, int64_t epoch, uint32_t part);
std::string AppliedKey(const std::string& prefix, const std::string& member);
std::string LogFloorKey(const std::string& prefix);
std::string LeaderElectionName(const std::string& prefix);

// A transaction that succeeds only while the leader key `key` still has create revision
// `revision` (every write of a leader is fenced so: a deposed one's fail).
etcdserverpb::TxnRequest FencedTxn(const std::string& key, int64_t revision);

// `batch` as the chunks (key, value) of batch number `seq`, none above `max_chunk_bytes` of data.
std::vector<std::pair<std::string, std::string>> EncodeBatch(const std::string& prefix,
                                                             const StoreBatch& batch, uint64_t seq,
                                                             int64_t epoch, size_t max_chunk_bytes);

// Reassembles batches from chunks seen in log order (etcd key order, or watch order). A
// deposed leader's unfinished batch is dropped when its successor's chunks come.
class LogAssembler {
 public:
  struct Batch {
    uint64_t seq = 0;
    int64_t epoch = 0;  // the create revision of the leader key of the leader that wrote it
    StoreBatch writes;
  };
  // Feeds one chunk's stored value; a whole batch once its last chunk has come.
  Result<std::optional<Batch>> Feed(const std::string& value);

 private:
  bool open_ = false;
  uint64_t seq_ = 0;
  int64_t epoch_ = 0;
  uint32_t next_part_ = 0;
  std::string data_;
};

}  // namespace snn
