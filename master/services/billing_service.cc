#include "master/services/billing_service.h"

#include <glog/logging.h>

#include "master/auth/access_policy.h"
#include "master/billing.h"

namespace snn {

void BillingService::Register(MethodRouter& router) {
  router.Add<v1::InvoiceRequest, v1::InvoiceResponse>(
      "billing.invoice", Right::kUser,
      [this](const CallContext& ctx, v1::InvoiceRequest req, Responder<v1::InvoiceResponse> r) {
        Invoice(ctx, std::move(req), r);
      });
  router.Add<v1::CreditRequest, v1::CreditResponse>(
      "billing.credit", Right::kAdmin,
      [this](const CallContext& ctx, v1::CreditRequest req, Responder<v1::CreditResponse> r) {
        Credit(ctx, std::move(req), r);
      });
}

void BillingService::Invoice(const CallContext& ctx, v1::InvoiceRequest req,
                             Responder<v1::InvoiceResponse> r) {
  auto tenant = ActingTenant(controller_.scheduling(), ctx.identity, req.tenant());
  if (!tenant.ok()) return r.Fail(ctx.Refuse(tenant.status()));
  if (Status s = MayRead(controller_.scheduling(), ctx.identity, *tenant); !s.ok()) {
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
  controller_.BudgetsChanged();
  v1::CreditResponse resp;
  *resp.mutable_account() = *account;
  journal_.Commit([r, resp] { r.Ok(resp); });
}

}  // namespace snn
