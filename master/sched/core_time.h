// Core time used by each tenant's running jobs, accrued as jobs start and stop, so that the
// fair-share ledger is charged in O(tenants) a pass instead of walking every running job, and
// a job that ends between two passes is charged up to its end.
// Pure data: times are passed in. Thread contract: the master's io thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace snn {

class CoreTimeAccrual {
 public:
  // `cores` start being used by `tenant` from `from_ms` (which may lie before earlier calls:
  // a running job read back at the master's start is charged from its own start).
  void Start(const std::string& tenant, uint64_t cores, int64_t from_ms);
  // `cores` stop being used at `at_ms`.
  void Stop(const std::string& tenant, uint64_t cores, int64_t at_ms);
  // Core-milliseconds used per tenant since the last call, up to `now_ms`; tenants that used
  // nothing are left out.
  std::map<std::string, double> Take(int64_t now_ms);

  uint64_t cores(const std::string& tenant) const;

 private:
  struct Tenant {
    uint64_t cores = 0;
    int64_t since_ms = INT64_MIN;  // accrued up to here
    double core_ms = 0;            // not yet taken
  };
  static void Advance(Tenant& t, int64_t to_ms);

  std::map<std::string, Tenant> tenants_;
};

}  // namespace snn
