// Accounting views over usage records (snnctl usage and report): the record of one task
// attempt, the filters of a usage listing, and a report of use per tenant (and user) per pool
// in a period. Pure: records and times in, figures out.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "proto/billing.pb.h"
#include "proto/job.pb.h"

namespace snn {

// The usage record of `task` of `job` (on a board of `board_type`), as it stands: a task still
// running has end_ms 0 and state RUNNING.
v1::UsageRecord UsageOf(const v1::JobRecord& job, const v1::TaskRecord& task,
                        const std::string& board_type);

// Whether `record` passes the user, pool and state filters of `request` (empty: any).
bool UsageMatches(const v1::UsageRecord& record, const v1::UsageRequest& request);

// Use in [from_ms, to_ms): only the part of each attempt inside the period counts (a running
// one up to `now_ms`). `pool_cores`: each pool's live cores now, for its utilization over the
// period's past (up to `now_ms`).
v1::ReportResponse BuildReport(const std::vector<v1::UsageRecord>& records, int64_t from_ms,
                               int64_t to_ms, int64_t now_ms, bool by_user,
                               const std::map<std::string, uint64_t>& pool_cores);

}  // namespace snn
