#include "master/services/policy_service.h"

#include <glog/logging.h>

#include "master/sched/policy_config.h"

namespace snn {

void PolicyService::Register(MethodRouter& router) {
  router.Add<v1::PolicyGetRequest, v1::PolicyGetResponse>(
      "admin.policy.get",
      [this](const CallContext&, v1::PolicyGetRequest, Responder<v1::PolicyGetResponse> r) {
        v1::PolicyGetResponse resp;
        *resp.mutable_config() = controller_.scheduling();
        r.Ok(resp);
      });
  router.Add<v1::SetQueueRequest, v1::PolicySetResponse>(
      "admin.queue.set",
      [this](const CallContext& ctx, v1::SetQueueRequest req, Responder<v1::PolicySetResponse> r) {
        if (ctx.credential.user().empty())
          return r.Fail(Unauthenticated("request carries no user"));
        auto next =
            SetQueue(controller_.scheduling(), req.queue(), req.create(), controller_.KnownPools());
        if (!next.ok()) return r.Fail(next.status());
        LOG(INFO) << ctx.credential.user() << " set queue " << req.queue().ShortDebugString();
        Apply(*next, r);
      });
  router.Add<v1::SetTenantRequest, v1::PolicySetResponse>(
      "admin.tenant.set",
      [this](const CallContext& ctx, v1::SetTenantRequest req, Responder<v1::PolicySetResponse> r) {
        if (ctx.credential.user().empty())
          return r.Fail(Unauthenticated("request carries no user"));
        auto next = SetTenant(controller_.scheduling(), req.tenant(), req.create(),
                              controller_.KnownPools());
        if (!next.ok()) return r.Fail(next.status());
        LOG(INFO) << ctx.credential.user() << " set tenant " << req.tenant().ShortDebugString();
        Apply(*next, r);
      });
}

void PolicyService::Apply(const v1::SchedulingConfig& next, Responder<v1::PolicySetResponse> r) {
  controller_.SetScheduling(next);
  journal_.PutPolicy(next);
  request_schedule_();
  v1::PolicySetResponse resp;
  *resp.mutable_config() = next;
  journal_.Commit([r, resp] { r.Ok(resp); });
}

}  // namespace snn
