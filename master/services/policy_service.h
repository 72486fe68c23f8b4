// Operator methods on the scheduling policy: `admin.policy.get` returns it; `admin.queue.set`
// and `admin.tenant.set` change one queue or tenant. A change is checked (capacities, known
// pools, known names), made durable, and applies from the next scheduling pass; a change that
// makes no sense is refused and nothing changes. `admin.tenant.members` adds and removes a
// tenant's members: its coordinators and admins may.
// Thread contract: only on the master's io thread.
#pragma once

#include <functional>

#include "common/rpc/rpc_router.h"
#include "master/jobs/scheduling_driver.h"
#include "master/store/journal.h"

namespace snn {

class PolicyService {
 public:
  PolicyService(SchedulingDriver& scheduling, Journal& journal,
                std::function<void()> request_schedule)
      : scheduling_(scheduling),
        journal_(journal),
        request_schedule_(std::move(request_schedule)) {}
  void Register(MethodRouter& router);

 private:
  void Apply(const v1::SchedulingConfig& next, Responder<v1::PolicySetResponse> r);
  void Members(const CallContext& ctx, v1::TenantMembersRequest req,
               Responder<v1::PolicySetResponse> r);

  SchedulingDriver& scheduling_;
  Journal& journal_;
  std::function<void()> request_schedule_;
};

}  // namespace snn
