#include "master/services/replica_service.h"

#include "master/store/replica_position.h"

namespace snn {

void ReplicaService::Register(MethodRouter& router) {
  router.Add(rpc::kHaSnapshot, [this](const CallContext& ctx, v1::HaSnapshotRequest req,
                                      Responder<v1::HaSnapshotResponse> r) {
    Snapshot(ctx, std::move(req), std::move(r));
  });
}

void ReplicaService::Snapshot(const CallContext&, v1::HaSnapshotRequest req,
                              Responder<v1::HaSnapshotResponse> r) {
  // The position first: every batch up to it is in the store before the page is read.
  auto applied = ReadAppliedSeq(store_);
  if (!applied.ok()) return r.Fail(applied.status());
  v1::HaSnapshotResponse resp;
  resp.set_applied_seq(*applied);
  const std::string from = req.after_key().empty() ? "" : req.after_key() + std::string(1, '\0');
  size_t bytes = 0;
  Status s = store_.Scan("", from, [&](std::string_view key, std::string_view value) {
    if (bytes >= kPageBytes) {
      resp.set_more(true);
      return false;
    }
    if (key == kAppliedSeqKey || key == kSnapshotMarkKey) return true;  // the reader's own
    auto* record = resp.add_records();
    record->set_key(std::string(key));
    record->set_value(std::string(value));
    bytes += key.size() + value.size();
    return true;
  });
  if (!s.ok()) return r.Fail(s);
  r.Ok(resp);
}

}  // namespace snn
