// Where a master's store stands in the replicated log of the HA mode (master/ha/): the number
// of the last batch applied to it, kept in the store itself, in the same atomic batch as that
// batch's writes; and the mark of a snapshot being copied in (the store is incomplete until the
// mark is gone).
#pragma once

#include <cstdint>

#include "common/base/status.h"
#include "master/store/store.h"

namespace snn {

inline constexpr char kAppliedSeqKey[] = "ha/applied";
inline constexpr char kSnapshotMarkKey[] = "ha/snapshot_incomplete";

// The last applied batch number in `store` (0: none).
Result<uint64_t> ReadAppliedSeq(Store& store);

}  // namespace snn
