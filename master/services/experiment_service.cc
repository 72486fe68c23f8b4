#include "master/services/experiment_service.h"

#include <functional>

#include "master/auth/access_policy.h"

namespace snn {

using namespace std::placeholders;

void ExperimentService::Register(MethodRouter& router) {
  router.Add(rpc::kExperimentSubmit, std::bind(&ExperimentService::Submit, this, _1, _2, _3));
  router.Add(rpc::kExperimentList, std::bind(&ExperimentService::List, this, _1, _2, _3));
}

Result<v1::JobRecord> ExperimentService::Find(const std::string& caller_tenant,
                                              const std::string& tenant, uint64_t id) {
  std::optional<v1::JobRecord> found;
  if (const v1::JobRecord* live = jobs_.FindByTenant(tenant, id)) {
    found = *live;
  } else {
    auto archived = archive_.FindByTenant(tenant, id);
    if (!archived.ok()) return archived.status();
    found = std::move(*archived);
  }
  if (!found || found->spec().kind() != v1::SERVICE ||
      !ExperimentBook::Admits(*found, caller_tenant).ok()) {
    return NotFound("tenant '" + tenant + "' has no experiment service " + std::to_string(id) +
                    " open to tenant '" + caller_tenant + "'");
  }
  return *found;
}

void ExperimentService::Submit(const CallContext& ctx, v1::ExperimentSubmitRequest req,
                               Responder<v1::ExperimentSubmitResponse> r) {
  auto tenant = ActingTenant(scheduling_.scheduling(), ctx.identity, ctx.credential.tenant());
  if (!tenant.ok()) return r.Fail(ctx.Refuse(tenant.status()));
  const std::string service_tenant = req.service_tenant().empty() ? *tenant : req.service_tenant();
  auto service = Find(*tenant, service_tenant, req.service());
  if (!service.ok()) return r.Fail(service.status());
  std::vector<v1::ExperimentSpec> specs(std::make_move_iterator(req.mutable_experiments()->begin()),
                                        std::make_move_iterator(req.mutable_experiments()->end()));
  auto queued = book_.Submit(*service, *tenant, ctx.identity.user, std::move(specs));
  if (!queued.ok()) return r.Fail(queued.status());
  journal_.Defer([r, answer = *queued] { r.Ok(answer); });
  journal_.Commit([this] { book_.Pump(); });  // sent to the agents once durable
}

void ExperimentService::List(const CallContext& ctx, v1::ExperimentListRequest req,
                             Responder<v1::ExperimentListResponse> r) {
  auto tenant = ActingTenant(scheduling_.scheduling(), ctx.identity, ctx.credential.tenant());
  if (!tenant.ok()) return r.Fail(ctx.Refuse(tenant.status()));
  const std::string service_tenant = req.service_tenant().empty() ? *tenant : req.service_tenant();
  auto service = Find(*tenant, service_tenant, req.service());
  if (!service.ok()) return r.Fail(service.status());
  // Read after what is pending is durable: a result listed is never one a restart forgets.
  journal_.Commit([this, r, req, service = std::move(*service), tenant = *tenant,
                   user = ctx.identity.user] { r.Reply(book_.List(service, tenant, user, req)); });
}

}  // namespace snn
