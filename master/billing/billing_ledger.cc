#include "master/billing/billing_ledger.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "master/billing/billing.h"

namespace snn {
namespace {

constexpr char kUsagePrefix[] = "usage/";
constexpr char kAccountPrefix[] = "acct/";
constexpr char kCreditPrefix[] = "credit/";

std::string Hex8(uint32_t v) {
  static const char* digits = "0123456789abcdef";
  std::string out(8, '0');
  for (int i = 7; i >= 0; --i, v >>= 4) out[i] = digits[v & 15];
  return out;
}

std::string UsagePrefix(const std::string& tenant) { return kUsagePrefix + tenant + "/"; }

}  // namespace

std::string FormatMoney(int64_t micros, const std::string& currency) {
  return FormatCents(static_cast<int64_t>(std::llround(static_cast<double>(micros) / 1e4))) +
         (currency.empty() ? "" : " " + currency);
}

Status BillingLedger::Load() {
  accounts_.clear();
  return store_.Scan(kAccountPrefix, kAccountPrefix, [&](std::string_view, std::string_view v) {
    v1::TenantAccount a;
    if (a.ParseFromArray(v.data(), static_cast<int>(v.size()))) accounts_[a.tenant()] = a;
    return true;
  });
}

bool BillingLedger::Record(const v1::UsageRecord& record, Journal& journal) {
  journal.Put(UsagePrefix(record.tenant()) + Hex16(static_cast<uint64_t>(record.end_ms())) + "/" +
                  Hex16(record.job_id()) + Hex8(record.task()) + Hex8(record.attempt()),
              record.SerializeAsString());
  auto it = accounts_.find(record.tenant());
  if (it == accounts_.end()) return false;  // no account: billed on invoices, no budget
  v1::TenantAccount& a = it->second;
  const bool was_over = Over(a);
  a.set_charged_micros(a.charged_micros() + ChargeMicros(record, config_));
  CheckAlerts(a);
  journal.Put(kAccountPrefix + a.tenant(), a.SerializeAsString());
  if (!was_over && Over(a)) {
    LOG(WARNING) << "tenant " << a.tenant() << " is over its budget: charged "
                 << FormatMoney(a.charged_micros(), config_.currency()) << " of "
                 << FormatMoney(a.credit_micros(), config_.currency())
                 << " credited; its new jobs are held until it is credited";
  }
  return was_over != Over(a);
}

Result<v1::TenantAccount> BillingLedger::Credit(const std::string& tenant, int64_t micros,
                                                const std::string& note, const std::string& by,
                                                int64_t now_ms, Journal& journal) {
  if (tenant.empty()) return InvalidArgument("credit: name a tenant");
  if (std::llabs(micros) > int64_t{1} << 52) return InvalidArgument("credit: amount too large");
  v1::TenantAccount& a = accounts_[tenant];
  a.set_tenant(tenant);
  a.set_credit_micros(std::max<int64_t>(0, a.credit_micros() + micros));
  CheckAlerts(a);
  v1::CreditRecord c;
  c.set_tenant(tenant);
  c.set_time_ms(now_ms);
  c.set_micros(micros);
  c.set_note(note);
  c.set_by(by);
  journal.Put(
      kCreditPrefix + tenant + "/" + Hex16(static_cast<uint64_t>(now_ms)) + Hex16(++credit_seq_),
      c.SerializeAsString());
  journal.Put(kAccountPrefix + tenant, a.SerializeAsString());
  return a;
}

void BillingLedger::CheckAlerts(v1::TenantAccount& a) {
  const double used = a.credit_micros() > 0 ? static_cast<double>(a.charged_micros()) /
                                                  static_cast<double>(a.credit_micros())
                                            : (a.charged_micros() > 0 ? 1e9 : 0);
  uint32_t crossed = 0;
  for (double at : config_.alert_at()) crossed += used >= at ? 1 : 0;
  if (crossed > a.alerts_raised()) {
    LOG(WARNING) << "tenant " << a.tenant() << " has used " << std::lround(used * 100)
                 << "% of its credit (charged "
                 << FormatMoney(a.charged_micros(), config_.currency()) << " of "
                 << FormatMoney(a.credit_micros(), config_.currency()) << ")";
  }
  a.set_alerts_raised(crossed);
}

Status BillingLedger::ScanUsage(const std::string& tenant, int64_t from_ms,
                                const std::function<bool(v1::UsageRecord&)>& visit) const {
  const std::string prefix = UsagePrefix(tenant);
  Status bad = Status::Ok();
  Status s =
      store_.Scan(prefix, prefix + Hex16(static_cast<uint64_t>(std::max<int64_t>(0, from_ms))),
                  [&](std::string_view, std::string_view v) {
                    v1::UsageRecord r;
                    if (!r.ParseFromArray(v.data(), static_cast<int>(v.size()))) {
                      bad = Internal("a usage record of tenant " + tenant + " does not parse");
                      return false;
                    }
                    if (r.tenant() != tenant)
                      return true;  // a tenant whose name extends this one's
                    return visit(r);
                  });
  SNN_RETURN_IF_ERROR(s);
  return bad;
}

Result<std::vector<v1::UsageRecord>> BillingLedger::Records(const std::string& tenant,
                                                            int64_t from_ms, int64_t to_ms) const {
  std::vector<v1::UsageRecord> out;
  SNN_RETURN_IF_ERROR(ScanUsage(tenant, from_ms, [&](v1::UsageRecord& r) {
    if (r.end_ms() >= to_ms) return false;
    out.push_back(std::move(r));
    return true;
  }));
  return out;
}

Result<std::vector<std::string>> BillingLedger::UsageTenants() const {
  std::vector<std::string> tenants;
  std::string from = kUsagePrefix;
  for (;;) {
    std::string found;
    SNN_RETURN_IF_ERROR(
        store_.Scan(kUsagePrefix, from, [&](std::string_view key, std::string_view) {
          key.remove_prefix(sizeof(kUsagePrefix) - 1);
          found = std::string(key.substr(0, key.find('/')));
          return false;
        }));
    if (found.empty()) return tenants;
    tenants.push_back(found);
    from = UsagePrefix(found);
    from.back() = '/' + 1;  // past every key of that tenant
  }
}

const v1::TenantAccount* BillingLedger::Account(const std::string& tenant) const {
  auto it = accounts_.find(tenant);
  return it == accounts_.end() ? nullptr : &it->second;
}

std::map<std::string, std::shared_ptr<const std::string>, std::less<>> BillingLedger::HeldTenants()
    const {
  std::map<std::string, std::shared_ptr<const std::string>, std::less<>> held;
  for (const auto& [tenant, a] : accounts_) {
    if (!Over(a)) continue;
    held[tenant] = std::make_shared<const std::string>(
        "held: tenant " + tenant + " is over its budget (charged " +
        FormatMoney(a.charged_micros(), config_.currency()) + " of " +
        FormatMoney(a.credit_micros(), config_.currency()) +
        " credited); an admin adds credit with snnctl tenant credit");
  }
  return held;
}

}  // namespace snn
