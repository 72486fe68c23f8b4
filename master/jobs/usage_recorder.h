// Bills what tasks used: each task attempt that ran leaves a usage record in the same batch as
// its end, and its tenant is charged (BillingLedger). A charge that changes which tenants are
// over budget is passed on, so that their pending jobs wait (or run again).
// Thread contract: only on the master's io thread.
#pragma once

#include <functional>
#include <string>

#include "master/billing/billing_ledger.h"
#include "master/jobs/usage_window.h"
#include "master/nodes/node_registry.h"
#include "master/store/journal.h"

namespace snn {

class UsageRecorder {
 public:
  UsageRecorder(const NodeRegistry& nodes, Journal& journal) : nodes_(nodes), journal_(journal) {}

  // Where records go and charges are kept (nullptr: no billing).
  void set_billing(BillingLedger* billing) { billing_ = billing; }
  BillingLedger* billing() const { return billing_; }
  // Called when a charge changed which tenants are held.
  void set_on_budgets_changed(std::function<void()> changed) { changed_ = std::move(changed); }

  // Records the usage of `task`, an attempt of `job` that ended (nothing if it never ran).
  void Record(const v1::JobRecord& job, const v1::TaskRecord& task);
  // Records a usage record made elsewhere (an experiment service's users) and charges it.
  void Charge(const v1::UsageRecord& record);
  // The type of the board `task` runs (or ran) on ("" if its node is unknown now).
  std::string BoardTypeOf(const v1::TaskRecord& task) const;
  // What ended lately, for the policy's core-hour limits (fed by Record and Charge).
  UsageWindow& window() { return window_; }

 private:
  // Constant after construction.
  const NodeRegistry& nodes_;
  Journal& journal_;
  BillingLedger* billing_ = nullptr;
  std::function<void()> changed_;
  UsageWindow window_;
};

}  // namespace snn
