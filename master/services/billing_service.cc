#include "master/services/billing_service.h"

#include <glog/logging.h>

#include <algorithm>
#include <limits>
#include <set>

#include "master/auth/access_policy.h"
#include "master/billing/billing.h"
#include "master/billing/usage_report.h"

namespace snn {

void BillingService::Register(MethodRouter& router) {
  router.Add(rpc::kBillingInvoice,
             [this](const CallContext& ctx, v1::InvoiceRequest req,
                    Responder<v1::InvoiceResponse> r) { Invoice(ctx, std::move(req), r); });
  router.Add(rpc::kBillingUsage,
             [this](const CallContext& ctx, v1::UsageRequest req, Responder<v1::UsageResponse> r) {
               Usage(ctx, std::move(req), r);
             });
  router.Add(rpc::kBillingReport,
             [this](const CallContext& ctx, v1::ReportRequest req,
                    Responder<v1::ReportResponse> r) { Report(ctx, std::move(req), r); });
  router.Add(rpc::kBillingCredit,
             [this](const CallContext& ctx, v1::CreditRequest req,
                    Responder<v1::CreditResponse> r) { Credit(ctx, std::move(req), r); });
}

void BillingService::Invoice(const CallContext& ctx, v1::InvoiceRequest req,
                             Responder<v1::InvoiceResponse> r) {
  auto tenant = ActingTenant(scheduling_.scheduling(), ctx.identity, req.tenant());
  if (!tenant.ok()) return r.Fail(ctx.Refuse(tenant.status()));
  if (Status s = MayRead(scheduling_.scheduling(), ctx.identity, *tenant); !s.ok()) {
    return r.Fail(ctx.Refuse(s));
  }
  if (req.to_ms() <= req.from_ms()) {
    return r.Fail(InvalidArgument("invoice: --to must be after --from"));
  }
  auto records = ledger_.Records(*tenant, req.from_ms(), req.to_ms());
  if (!records.ok()) return r.Fail(records.status());
  v1::InvoiceResponse resp;
  *resp.mutable_invoice() =
      ComputeInvoice(*tenant, req.from_ms(), req.to_ms(), *records, ledger_.config());
  if (const v1::TenantAccount* a = ledger_.Account(*tenant)) *resp.mutable_account() = *a;
  resp.mutable_account()->set_tenant(*tenant);
  r.Ok(resp);
}

void BillingService::Credit(const CallContext& ctx, v1::CreditRequest req,
                            Responder<v1::CreditResponse> r) {
  auto account = ledger_.Credit(req.tenant(), req.micros(), req.note(), ctx.identity.user,
                                clock_.NowMs(), journal_);
  if (!account.ok()) return r.Fail(account.status());
  LOG(INFO) << ctx.identity.Describe() << " credited tenant " << req.tenant() << " with "
            << FormatMoney(req.micros(), ledger_.config().currency()) << " (" << req.note()
            << "): credits " << FormatMoney(account->credit_micros(), ledger_.config().currency())
            << ", charged " << FormatMoney(account->charged_micros(), ledger_.config().currency());
  scheduling_.BudgetsChanged();
  v1::CreditResponse resp;
  *resp.mutable_account() = *account;
  journal_.Commit([r, resp] { r.Ok(resp); });
}

namespace {
constexpr size_t kMaxUsageRows = 10000;
}

Result<std::vector<std::string>> BillingService::Tenants(const CallContext& ctx,
                                                         const std::string& tenant, bool all) {
  const v1::SchedulingConfig& policy = scheduling_.scheduling();
  if (!all) {
    auto acting =
        ActingTenant(policy, ctx.identity, tenant.empty() ? ctx.credential.tenant() : tenant);
    if (!acting.ok()) return ctx.Refuse(acting.status());
    if (Status s = MayRead(policy, ctx.identity, *acting); !s.ok()) return ctx.Refuse(s);
    return std::vector<std::string>{*acting};
  }
  if (ctx.identity.role < Role::kReader) {
    return ctx.Refuse(PermissionDenied("every tenant's usage needs the reader role; " +
                                       ctx.identity.Describe() + " has the user role"));
  }
  auto recorded = ledger_.UsageTenants();
  if (!recorded.ok()) return recorded.status();
  std::set<std::string> tenants(recorded->begin(), recorded->end());
  for (const auto& [name, node] : nodes_.nodes()) {
    for (uint64_t id : jobs_.JobsActiveOn(name)) {
      if (const v1::JobRecord* job = jobs_.Find(id)) tenants.insert(job->tenant());
    }
  }
  return std::vector<std::string>(tenants.begin(), tenants.end());
}

Status BillingService::ForEachRecord(const std::vector<std::string>& tenants, int64_t from_ms,
                                     int64_t to_ms,
                                     const std::function<void(v1::UsageRecord&)>& visit) {
  for (const auto& tenant : tenants) {
    SNN_RETURN_IF_ERROR(ledger_.ScanUsage(tenant, from_ms, [&](v1::UsageRecord& r) {
      if (r.start_ms() < to_ms) visit(r);
      return true;
    }));
  }
  const std::set<std::string> wanted(tenants.begin(), tenants.end());
  std::set<uint64_t> seen;
  for (const auto& [name, node] : nodes_.nodes()) {
    for (uint64_t id : jobs_.JobsActiveOn(name)) {
      if (!seen.insert(id).second) continue;
      const v1::JobRecord* job = jobs_.Find(id);
      if (job == nullptr || !wanted.count(job->tenant())) continue;
      for (const auto& task : job->tasks()) {
        const bool running = task.state() == v1::TASK_RUNNING || task.state() == v1::TASK_LAUNCHING;
        if (!running || task.start_ms() == 0 || task.start_ms() >= to_ms) continue;
        v1::UsageRecord r = UsageOf(*job, task, usage_.BoardTypeOf(task));
        visit(r);
      }
    }
  }
  return Status::Ok();
}

void BillingService::Usage(const CallContext& ctx, v1::UsageRequest req,
                           Responder<v1::UsageResponse> r) {
  auto tenants = Tenants(ctx, req.tenant(), req.all_tenants());
  if (!tenants.ok()) return r.Fail(tenants.status());
  const int64_t to = req.to_ms() > 0 ? req.to_ms() : std::numeric_limits<int64_t>::max();
  if (to <= req.from_ms()) return r.Fail(InvalidArgument("usage: --until must be after --since"));
  if (req.job() != 0 && tenants->size() != 1) {
    return r.Fail(InvalidArgument("usage: --job names one tenant's job; leave out --all-tenants"));
  }
  UsageLimit kept(req.limit() == 0 ? kMaxUsageRows : std::min<size_t>(req.limit(), kMaxUsageRows));
  Status s = ForEachRecord(*tenants, req.from_ms(), to, [&](v1::UsageRecord& rec) {
    if (UsageMatches(rec, req)) kept.Add(std::move(rec));
  });
  if (!s.ok()) return r.Fail(s);
  v1::UsageResponse resp;
  resp.set_now_ms(clock_.NowMs());
  resp.set_truncated(kept.truncated());
  for (auto& rec : kept.Take()) *resp.add_records() = std::move(rec);
  r.Ok(resp);
}

void BillingService::Report(const CallContext& ctx, v1::ReportRequest req,
                            Responder<v1::ReportResponse> r) {
  auto tenants = Tenants(ctx, req.tenant(), req.all_tenants());
  if (!tenants.ok()) return r.Fail(tenants.status());
  if (req.to_ms() <= req.from_ms()) {
    return r.Fail(InvalidArgument("report: --to must be after --from"));
  }
  if (req.job() != 0 && tenants->size() != 1) {
    return r.Fail(InvalidArgument("report: --job names one tenant's job; leave out --all-tenants"));
  }
  ReportBuilder report(req.from_ms(), req.to_ms(), clock_.NowMs(), req.by_user());
  Status s = ForEachRecord(*tenants, req.from_ms(), req.to_ms(), [&](v1::UsageRecord& rec) {
    if (UsageOfJob(rec, req.job())) report.Add(rec);
  });
  if (!s.ok()) return r.Fail(s);
  std::map<std::string, uint64_t> pool_cores;
  for (const auto& [name, node] : nodes_.nodes()) {
    uint64_t cores = 0;
    for (const auto& b : node.record.boards()) cores += LiveCores(b);
    for (const auto& pool : node.record.pools()) pool_cores[pool] += cores;
  }
  r.Ok(report.Finish(pool_cores));
}

}  // namespace snn
