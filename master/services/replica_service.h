// What the leader of an HA group serves its standbys (ha.snapshot): its store, page by page,
// for a standby that fell behind the log kept in etcd. Only a master may call it (a client
// certificate with OU=master).
// Thread contract: the master's io thread.
#pragma once

#include "common/rpc/rpc_router.h"
#include "master/store/store.h"
#include "proto/ha.pb.h"

namespace snn {

class ReplicaService {
 public:
  explicit ReplicaService(Store& store) : store_(store) {}

  void Register(MethodRouter& router);

  // A page ends after this many bytes of records (or at the end of the store).
  static constexpr size_t kPageBytes = 1 << 20;

 private:
  void Snapshot(const CallContext& ctx, v1::HaSnapshotRequest req,
                Responder<v1::HaSnapshotResponse> r);

  Store& store_;
};

}  // namespace snn
