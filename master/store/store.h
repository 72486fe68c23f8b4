// The master's durable state, behind an interface so tests can use a fake that fails on demand.
// Records are opaque key/value pairs; master/store/journal.h defines the keys (job/, node/,
// policy) and stores the protobuf records of proto/job.proto, node.proto and policy.proto.
// Thread contract: Commit may be called from any thread; `done` runs on a store thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace snn {

struct StoreWrite {
  std::string key;
  std::optional<std::string> value;  // nullopt deletes the key
};
using StoreBatch = std::vector<StoreWrite>;
using StoreRecords = std::vector<std::pair<std::string, std::string>>;

class Store {
 public:
  virtual ~Store() = default;

  // Every record in key order. Call once at startup, before the first Commit.
  virtual Result<StoreRecords> LoadAll() = 0;

  // Queues `batch` to be written atomically and synced. `done` runs once this batch and every
  // batch queued before it are durable, in queue order. An empty batch is a barrier.
  virtual void Commit(StoreBatch batch, std::function<void(Status)> done) = 0;

  // Waits for queued batches, then stops accepting new ones.
  virtual void Close() = 0;
};

}  // namespace snn
