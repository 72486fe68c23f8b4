// Accounting, invoices and credits. `billing.usage` (like sacct) lists task attempts with
// filters, and `billing.report` (like sreport) sums use per tenant, user and pool in a period:
// a tenant's members may ask for its own, readers for every tenant's.
// `billing.invoice`: a tenant's invoice for a period, computed from the
// durable usage records, and its account; its members (and readers, admins) may ask.
// `billing.credit` (admin): adds to or takes back from a tenant's credits, durably, and
// releases (or holds) its jobs from the next scheduling pass.
// Thread contract: only on the master's io thread.
#pragma once

#include "common/base/clock.h"
#include "common/rpc/rpc_router.h"
#include "master/billing/billing_ledger.h"
#include "master/jobs/job_table.h"
#include "master/jobs/scheduling_driver.h"
#include "master/jobs/usage_recorder.h"
#include "master/nodes/node_registry.h"
#include "master/store/journal.h"

namespace snn {

class BillingService {
 public:
  BillingService(BillingLedger& ledger, SchedulingDriver& scheduling, const UsageRecorder& usage,
                 const JobTable& jobs, const NodeRegistry& nodes, Journal& journal,
                 const Clock& clock)
      : ledger_(ledger),
        scheduling_(scheduling),
        usage_(usage),
        jobs_(jobs),
        nodes_(nodes),
        journal_(journal),
        clock_(clock) {}
  void Register(MethodRouter& router);

 private:
  void Invoice(const CallContext& ctx, v1::InvoiceRequest req, Responder<v1::InvoiceResponse> r);
  void Credit(const CallContext& ctx, v1::CreditRequest req, Responder<v1::CreditResponse> r);
  void Usage(const CallContext& ctx, v1::UsageRequest req, Responder<v1::UsageResponse> r);
  void Report(const CallContext& ctx, v1::ReportRequest req, Responder<v1::ReportResponse> r);
  // The tenants a usage query covers: the caller's (or the one it names, if it may read it),
  // or with `all` (readers) every tenant with records or running tasks.
  Result<std::vector<std::string>> Tenants(const CallContext& ctx, const std::string& tenant,
                                           bool all);
  // Hands `visit` each usage record of `tenants` active in [from, to), one at a time: the
  // durable ones, and the attempts running now (from the jobs active on each node).
  Status ForEachRecord(const std::vector<std::string>& tenants, int64_t from_ms, int64_t to_ms,
                       const std::function<void(v1::UsageRecord&)>& visit);

  BillingLedger& ledger_;
  SchedulingDriver& scheduling_;
  const UsageRecorder& usage_;
  const JobTable& jobs_;
  const NodeRegistry& nodes_;
  Journal& journal_;
  const Clock& clock_;
};

}  // namespace snn
