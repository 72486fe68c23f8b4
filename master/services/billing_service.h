// Invoices and credits. `billing.invoice`: a tenant's invoice for a period, computed from the
// durable usage records, and its account; its members (and readers, admins) may ask.
// `billing.credit` (admin): adds to or takes back from a tenant's credits, durably, and
// releases (or holds) its jobs from the next scheduling pass.
// Thread contract: only on the master's io thread.
#pragma once

#include "common/clock.h"
#include "common/rpc_router.h"
#include "master/billing_ledger.h"
#include "master/job_controller.h"
#include "master/store/journal.h"

namespace snn {

class BillingService {
 public:
  BillingService(BillingLedger& ledger, JobController& controller, Journal& journal,
                 const Clock& clock)
      : ledger_(ledger), controller_(controller), journal_(journal), clock_(clock) {}
  void Register(MethodRouter& router);

 private:
  void Invoice(const CallContext& ctx, v1::InvoiceRequest req, Responder<v1::InvoiceResponse> r);
  void Credit(const CallContext& ctx, v1::CreditRequest req, Responder<v1::CreditResponse> r);

  BillingLedger& ledger_;
  JobController& controller_;
  Journal& journal_;
  const Clock& clock_;
};

}  // namespace snn
