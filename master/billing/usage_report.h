// Accounting views over usage records (snnctl usage and report): the record of one task
// attempt, the filters of a usage listing, and a report of use per tenant (and user) per pool
// in a period. Pure: records and times in, figures out.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
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
// Whether `record` is of the tenant's job `job` (0: any), or of an element of the array `job`.
bool UsageOfJob(const v1::UsageRecord& record, uint64_t job);

// Use in [from_ms, to_ms), summed record by record: memory holds the rows and the jobs seen,
// not the records. Only the part of each attempt inside the period counts (a running one up to
// `now_ms`); a job's wait is from its submission to its first start in the period.
class ReportBuilder {
 public:
  ReportBuilder(int64_t from_ms, int64_t to_ms, int64_t now_ms, bool by_user)
      : from_ms_(from_ms), to_ms_(to_ms), now_ms_(now_ms), by_user_(by_user) {}
  void Add(const v1::UsageRecord& record);
  // `pool_cores`: each pool's live cores now, for its utilization over the period's past.
  v1::ReportResponse Finish(const std::map<std::string, uint64_t>& pool_cores) const;

 private:
  struct Sums {
    double core_ms = 0, ksps_ms = 0;
    std::unordered_map<uint64_t, int64_t> jobs;  // job -> its least wait in the period (-1: none)
  };
  const int64_t from_ms_, to_ms_, now_ms_;
  const bool by_user_;
  std::map<std::tuple<std::string, std::string, std::string>, Sums> rows_;
  std::map<std::string, double> pool_core_ms_;
};

// The first `limit` usage records by start (then job, task, attempt), kept as they come:
// memory for `limit` records however many are offered.
class UsageLimit {
 public:
  explicit UsageLimit(size_t limit) : limit_(limit) {}
  bool Add(v1::UsageRecord record);  // false once nothing more can be kept
  bool truncated() const { return truncated_; }
  std::vector<v1::UsageRecord> Take();  // sorted

 private:
  static bool Earlier(const v1::UsageRecord& a, const v1::UsageRecord& b);
  const size_t limit_;
  std::vector<v1::UsageRecord> heap_;  // a max-heap by Earlier: the latest on top
  bool truncated_ = false;
};

// Use in [from_ms, to_ms): only the part of each attempt inside the period counts (a running
// one up to `now_ms`). `pool_cores`: each pool's live cores now, for its utilization over the
// period's past (up to `now_ms`).
v1::ReportResponse BuildReport(const std::vector<v1::UsageRecord>& records, int64_t from_ms,
                               int64_t to_ms, int64_t now_ms, bool by_user,
                               const std::map<std::string, uint64_t>& pool_cores);

}  // namespace snn
