// The core-time of the task attempts that ended lately, per user and per tenant, for the
// policy's core-hour limits (v1::UsageLimits.max_core_hours over window_s): kept for the longest
// window a limit sets, fed by the usage records as attempts end, and read back from the billing
// ledger's records when a master starts or a limit's window grows, so that what was used
// before counts. Counted as `snnctl report` counts core-hours (a step's time is its session's).
// Thread contract: only on the master's io thread.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "master/billing/billing_ledger.h"
#include "master/sched/scheduler.h"
#include "proto/billing.pb.h"
#include "proto/policy.pb.h"

namespace snn {

class UsageWindow {
 public:
  // The windows `config` limits, and the longest of them (0: nothing is kept). Returns true
  // if the longest grew: what ended before should be read back (Load).
  bool Configure(const v1::SchedulingConfig& config);
  // Reads the records of every tenant that ended in the longest window before `now_ms`.
  Status Load(const BillingLedger& ledger, int64_t now_ms);
  // An attempt ended (its usage record).
  void Add(const v1::UsageRecord& record);
  // What ended within each limited user's and tenant's window before `now_ms` (null when no
  // limit is set); forgets what no window reaches any more.
  std::shared_ptr<const EndedCoreTime> Ended(int64_t now_ms);

 private:
  struct Use {
    int64_t start_ms, end_ms;
    double cores;  // weighted as the report weighs it (an experiment by its board time)
  };
  double Sum(const std::deque<Use>& uses, int64_t from_ms) const;

  int64_t horizon_ms_ = 0;
  int64_t user_window_ms_ = 0;                              // 0: no user limit
  std::map<std::string, int64_t> tenant_windows_;           // limited tenants
  std::map<std::string, std::deque<Use>> users_, tenants_;  // in order of their end
};

}  // namespace snn
