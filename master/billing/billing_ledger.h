// Tenants' accounts and the durable usage records their bills come from. Each task attempt
// that ran leaves a UsageRecord, written in the same batch as the task's end, and its tenant's
// account (charges at list prices) in that batch too; credits are records of their own. So an
// invoice, computed from the records, is the same before and after any restart, and a restart
// reads one account per tenant, not the records.
// Budgets: a tenant that has an account (was credited, even 0) may spend up to its credits;
// once its charges reach them its jobs are held (new ones wait with the reason; running ones
// finish), until it is credited again. Crossing each `alert_at` fraction logs a warning once.
// Keys: "usage/" + tenant + "/" + 16 hex digits of the end time + job id, task and attempt in
// hex (a tenant's records in time order); "acct/" + tenant; "credit/" + tenant + "/" + time.
// Thread contract: only on the master's io thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "master/store/journal.h"
#include "master/store/store.h"
#include "proto/billing.pb.h"

namespace snn {

class BillingLedger {
 public:
  explicit BillingLedger(Store& store) : store_(store) {}

  // Reads the accounts (at start).
  Status Load();
  void SetConfig(const v1::BillingConfig& config) { config_ = config; }
  const v1::BillingConfig& config() const { return config_; }

  // Records one ended task attempt and charges its tenant, in `journal`'s batch. Returns true
  // if the tenant's hold changed.
  bool Record(const v1::UsageRecord& record, Journal& journal);

  // Adds `micros` (negative: takes back, never below 0) to `tenant`'s credits, opening its
  // account. Returns the account; the hold may have changed.
  Result<v1::TenantAccount> Credit(const std::string& tenant, int64_t micros,
                                   const std::string& note, const std::string& by, int64_t now_ms,
                                   Journal& journal);

  // The usage records of `tenant` that ended in [from_ms, to_ms), from the store.
  Result<std::vector<v1::UsageRecord>> Records(const std::string& tenant, int64_t from_ms,
                                               int64_t to_ms) const;

  // Visits `tenant`'s records that ended at or after `from_ms`, in order of their end, while
  // `visit` returns true.
  Status ScanUsage(const std::string& tenant, int64_t from_ms,
                   const std::function<bool(v1::UsageRecord&)>& visit) const;
  // Every tenant with usage records: one seek per tenant, not a read of every record.
  Result<std::vector<std::string>> UsageTenants() const;

  const v1::TenantAccount* Account(const std::string& tenant) const;
  const std::map<std::string, v1::TenantAccount>& accounts() const { return accounts_; }
  // Tenants whose jobs are held, with the reason their pending jobs show.
  std::map<std::string, std::shared_ptr<const std::string>, std::less<>> HeldTenants() const;

 private:
  static bool Over(const v1::TenantAccount& a) { return a.charged_micros() >= a.credit_micros(); }
  // Raises the alerts the account's use has crossed (and re-arms those it fell below).
  void CheckAlerts(v1::TenantAccount& a);

  Store& store_;
  v1::BillingConfig config_;
  std::map<std::string, v1::TenantAccount> accounts_;
  uint64_t credit_seq_ = 0;
};

// "12.34 EUR" from micro-units.
std::string FormatMoney(int64_t micros, const std::string& currency);

}  // namespace snn
