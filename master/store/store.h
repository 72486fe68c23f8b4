// The master's durable state, behind an interface so tests can use a fake that fails on demand.
// Records are opaque key/value pairs; master/store/journal.h defines the keys (job/, node/,
// policy) and stores the protobuf records of proto/job.proto, node.proto and policy.proto.
// Thread contract: Commit may be called from any thread; `done` runs on a store thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/base/status.h"

namespace snn {

struct StoreWrite {
  std::string key;
  std::optional<std::string> value;  // nullopt deletes the key
};
using StoreBatch = std::vector<StoreWrite>;
using StoreRecords = std::vector<std::pair<std::string, std::string>>;

// Called for each record a scan visits, in key order; returning false ends the scan.
using StoreVisitor = std::function<bool(std::string_view key, std::string_view value)>;

class Store {
 public:
  virtual ~Store() = default;

  // Reads, from any thread. They see every batch whose `done` has run.
  // The value stored at `key`, or nullopt.
  virtual Result<std::optional<std::string>> Get(const std::string& key) = 0;
  // Visits the records whose key starts with `prefix`, from the first key >= `from` on.
  virtual Status Scan(const std::string& prefix, const std::string& from,
                      const StoreVisitor& visit) = 0;
  // Every record in key order (tests, and small stores).
  Result<StoreRecords> LoadAll();

  // Queues `batch` to be written atomically and synced. `done` runs once this batch and every
  // batch queued before it are durable, in queue order. An empty batch is a barrier.
  virtual void Commit(StoreBatch batch, std::function<void(Status)> done) = 0;

  // Waits for queued batches, then stops accepting new ones.
  virtual void Close() = 0;
};

}  // namespace snn
