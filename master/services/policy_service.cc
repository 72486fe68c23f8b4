#include "master/services/policy_service.h"

#include <glog/logging.h>

#include <algorithm>

#include "master/auth/access_policy.h"
#include "master/sched/policy_config.h"

namespace snn {

void PolicyService::Register(MethodRouter& router) {
  router.Add(rpc::kTenantMembers,
             [this](const CallContext& ctx, v1::TenantMembersRequest req,
                    Responder<v1::PolicySetResponse> r) { Members(ctx, std::move(req), r); });
  router.Add(rpc::kPolicyGet,
             [this](const CallContext&, v1::PolicyGetRequest, Responder<v1::PolicyGetResponse> r) {
               v1::PolicyGetResponse resp;
               *resp.mutable_config() = scheduling_.scheduling();
               r.Ok(resp);
             });
  router.Add(rpc::kQueueSet, [this](const CallContext& ctx, v1::SetQueueRequest req,
                                    Responder<v1::PolicySetResponse> r) {
    auto next =
        SetQueue(scheduling_.scheduling(), req.queue(), req.create(), scheduling_.KnownPools());
    if (!next.ok()) return r.Fail(next.status());
    LOG(INFO) << ctx.identity.Describe() << " set queue " << req.queue().ShortDebugString();
    Apply(*next, r);
  });
  router.Add(rpc::kTenantSet, [this](const CallContext& ctx, v1::SetTenantRequest req,
                                     Responder<v1::PolicySetResponse> r) {
    auto next =
        SetTenant(scheduling_.scheduling(), req.tenant(), req.create(), scheduling_.KnownPools());
    if (!next.ok()) return r.Fail(next.status());
    LOG(INFO) << ctx.identity.Describe() << " set tenant " << req.tenant().ShortDebugString();
    Apply(*next, r);
  });
}

void PolicyService::Members(const CallContext& ctx, v1::TenantMembersRequest req,
                            Responder<v1::PolicySetResponse> r) {
  v1::SchedulingConfig next = scheduling_.scheduling();
  v1::TenantConfig* tenant = nullptr;
  for (auto& t : *next.mutable_tenants()) {
    if (t.name() == req.tenant()) tenant = &t;
  }
  if (tenant == nullptr) {
    return r.Fail(NotFound("no declared tenant '" + req.tenant() +
                           "' (an admin declares it with snnctl tenant set --create)"));
  }
  if (ctx.identity.role != Role::kAdmin && !IsCoordinator(next, ctx.identity, req.tenant())) {
    return r.Fail(ctx.Refuse(PermissionDenied("changing the members of tenant '" + req.tenant() +
                                              "' needs to be its coordinator or an admin; " +
                                              ctx.identity.Describe() + " is neither")));
  }
  auto* users = tenant->mutable_members()->mutable_users();
  for (const auto& name : req.add_users()) {
    if (name.empty() || name.size() > 64 || name.find_first_of(" \t\n,:/") != std::string::npos) {
      return r.Fail(InvalidArgument("'" + name.substr(0, 64) + "' is not a user name"));
    }
    if (std::find(users->begin(), users->end(), name) == users->end()) *users->Add() = name;
  }
  for (const auto& name : req.remove_users()) {
    auto it = std::find(users->begin(), users->end(), name);
    if (it == users->end()) {
      return r.Fail(NotFound("user '" + name.substr(0, 64) + "' is not a member of tenant '" +
                             req.tenant() + "'"));
    }
    users->erase(it);
  }
  if (users->size() > 10000) return r.Fail(InvalidArgument("a tenant lists at most 10000 users"));
  LOG(INFO) << ctx.identity.Describe() << " changed the members of tenant " << req.tenant() << ": "
            << req.ShortDebugString();
  Apply(next, r);
}

void PolicyService::Apply(const v1::SchedulingConfig& next, Responder<v1::PolicySetResponse> r) {
  scheduling_.SetScheduling(next);
  journal_.PutPolicy(next);
  request_schedule_();
  v1::PolicySetResponse resp;
  *resp.mutable_config() = next;
  journal_.Commit([r, resp] { r.Ok(resp); });
}

}  // namespace snn
