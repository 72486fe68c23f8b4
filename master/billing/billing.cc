#include "master/billing/billing.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace snn {
namespace {

constexpr double kMsPerHour = 3600.0 * 1000.0;

const v1::BoardPrice* PriceOf(const v1::BillingConfig& c, const std::string& type) {
  for (const auto& p : c.prices()) {
    if (p.board_type() == type) return &p;
  }
  return nullptr;
}

}  // namespace

int64_t BilledMs(const v1::UsageRecord& r, const v1::BillingConfig& c) {
  if (r.kind() == "step") return 0;  // it ran on its session's resources, billed there
  if (r.kind() == "experiment") return r.busy_us() / 1000;  // its board time, exactly
  const int64_t ran = std::max<int64_t>(0, r.end_ms() - r.start_ms());
  const int64_t held = std::max<int64_t>(ran, static_cast<int64_t>(c.minimum_s()) * 1000);
  // A service: its users paid for the board time their experiments used.
  return r.kind() == "service" ? std::max<int64_t>(0, held - r.busy_us() / 1000) : held;
}

int64_t ChargeMicros(const v1::UsageRecord& r, const v1::BillingConfig& c) {
  const v1::BoardPrice* price = PriceOf(c, r.board_type());
  if (price == nullptr) return 0;
  const double hours = static_cast<double>(BilledMs(r, c)) / kMsPerHour;
  const double cost = hours * (r.cores() * price->core_hour() + r.ksps() * price->ksps_hour() +
                               r.units() * price->unit_hour());
  return std::llround(cost * 1e6);
}

v1::Invoice ComputeInvoice(const std::string& tenant, int64_t from_ms, int64_t to_ms,
                           const std::vector<v1::UsageRecord>& records,
                           const v1::BillingConfig& c) {
  v1::Invoice inv;
  inv.set_tenant(tenant);
  inv.set_from_ms(from_ms);
  inv.set_to_ms(to_ms);
  inv.set_currency(c.currency());
  struct Held {
    double core_ms = 0, ksps_ms = 0, unit_ms = 0;
  };
  std::map<std::string, Held> by_type;
  for (const auto& r : records) {
    if (r.tenant() != tenant) continue;
    const double billed = static_cast<double>(BilledMs(r, c));
    Held& h = by_type[r.board_type()];
    h.core_ms += r.cores() * billed;
    h.ksps_ms += r.ksps() * billed;
    h.unit_ms += r.units() * billed;
    inv.set_task_attempts(inv.task_attempts() + 1);
  }
  double core_hours = 0;
  for (const auto& entry : by_type) {
    const std::string& type = entry.first;  // not a structured binding: the lambda uses it
    const Held& held = entry.second;
    core_hours += held.core_ms / kMsPerHour;
    const v1::BoardPrice* price = PriceOf(c, type);
    if (price == nullptr) inv.add_unpriced_board_types(type);
    auto line = [&](const char* resource, double ms, double unit) {
      if (ms <= 0) return;
      v1::InvoiceLine* l = inv.add_lines();
      l->set_board_type(type);
      l->set_resource(resource);
      l->set_quantity(ms / kMsPerHour);
      l->set_unit_price(unit);
      l->set_cents(std::llround(ms / kMsPerHour * unit * 100));
      inv.set_subtotal_cents(inv.subtotal_cents() + l->cents());
    };
    line("core-hours", held.core_ms, price ? price->core_hour() : 0);
    line("ksps-hours", held.ksps_ms, price ? price->ksps_hour() : 0);
    line("unit-hours", held.unit_ms, price ? price->unit_hour() : 0);
  }
  double percent = 0;
  for (const auto& d : c.discounts()) {
    if (core_hours > d.over_core_hours()) percent = std::max(percent, d.percent());
  }
  inv.set_discount_percent(percent);
  inv.set_discount_cents(std::llround(static_cast<double>(inv.subtotal_cents()) * percent / 100));
  inv.set_total_cents(inv.subtotal_cents() - inv.discount_cents());
  return inv;
}

std::string FormatCents(int64_t cents) {
  const int64_t a = std::llabs(cents);
  std::string frac = std::to_string(a % 100);
  if (frac.size() < 2) frac = "0" + frac;
  return (cents < 0 ? "-" : "") + std::to_string(a / 100) + "." + frac;
}

}  // namespace snn
