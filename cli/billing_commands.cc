#include "cli/billing_commands.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>

#include "cli/format.h"
#include "cli/session.h"
#include "cli/time_arg.h"
#include "common/base/clock.h"

namespace snn {
namespace {

std::string Money(int64_t cents) {
  const int64_t a = std::llabs(cents);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%lld.%02lld", cents < 0 ? "-" : "",
                static_cast<long long>(a / 100), static_cast<long long>(a % 100));
  return buf;
}

std::string MoneyMicros(int64_t micros) {
  return Money(static_cast<int64_t>(std::llround(static_cast<double>(micros) / 1e4)));
}

}  // namespace

Result<int64_t> ParseAmountMicros(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) ||
      std::fabs(v) > 1e9) {
    return InvalidArgument("amount '" + text +
                           "' is not a number such as 100 or 12.50 (at most a billion)");
  }
  return static_cast<int64_t>(std::llround(v * 1e6));
}

std::string FormatInvoice(const v1::InvoiceResponse& resp) {
  const v1::Invoice& inv = resp.invoice();
  const std::string cur = inv.currency().empty() ? "" : " " + inv.currency();
  std::ostringstream out;
  out << "Invoice for tenant " << inv.tenant() << ": task attempts that ended from "
      << FormatTimestamp(inv.from_ms()) << " to " << FormatTimestamp(inv.to_ms()) << " ("
      << inv.task_attempts() << ")\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-16s %-11s %14s %12s %12s\n", "BOARD TYPE", "RESOURCE",
                "QUANTITY", "UNIT PRICE", "AMOUNT");
  out << line;
  double core_hours = 0;
  for (const auto& l : inv.lines()) {
    if (l.resource() == "core-hours") core_hours += l.quantity();
    std::snprintf(line, sizeof line, "%-16s %-11s %14.3f %12g %12s\n", l.board_type().c_str(),
                  l.resource().c_str(), l.quantity(), l.unit_price(), Money(l.cents()).c_str());
    out << line;
  }
  out << "Subtotal " << Money(inv.subtotal_cents()) << cur << "\n";
  if (inv.discount_cents() != 0) {
    std::snprintf(line, sizeof line, "Volume discount %g%% (%.1f core-hours): -",
                  inv.discount_percent(), core_hours);
    out << line << Money(inv.discount_cents()) << cur << "\n";
  }
  out << "Total " << Money(inv.total_cents()) << cur << "\n";
  for (const auto& type : inv.unpriced_board_types()) {
    out << "Note: board type " << type << " has no price in the policy; billed 0\n";
  }
  const v1::TenantAccount& a = resp.account();
  if (a.credit_micros() != 0 || a.charged_micros() != 0) {
    out << "Account: credited " << MoneyMicros(a.credit_micros()) << cur << ", charged "
        << MoneyMicros(a.charged_micros()) << cur << " at list prices, balance "
        << MoneyMicros(a.credit_micros() - a.charged_micros()) << cur
        << (a.charged_micros() >= a.credit_micros() ? " (over budget: new jobs are held)" : "")
        << "\n";
  } else {
    out << "Account: none (no budget; an admin opens one with snnctl tenant credit)\n";
  }
  return out.str();
}

int Invoice(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() > 2) {
    return Fail(err, InvalidArgument("usage: snnctl invoice [TENANT] [--from T] [--to T]"));
  }
  const int64_t now = SystemClock().NowMs();
  v1::InvoiceRequest req;
  req.set_tenant(o.args.size() == 2 ? o.args[1] : o.tenant);
  auto period =
      ParsePeriod(o.from, o.to, now, Period{MonthStartUtc(now, false), MonthStartUtc(now, true)});
  if (!period.ok()) return Fail(err, period.status());
  const int64_t from = period->from_ms, to = period->to_ms;
  req.set_from_ms(from);
  req.set_to_ms(to);
  auto resp = Call(o, rpc::kBillingInvoice, req);
  if (!resp.ok()) return Fail(err, resp.status());
  out << (o.output == "json" ? FormatJson(*resp) + "\n" : FormatInvoice(*resp));
  return 0;
}

int TenantCredit(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 4) {
    return Fail(err, InvalidArgument("usage: snnctl tenant credit TENANT AMOUNT [--note TEXT]"));
  }
  auto micros = ParseAmountMicros(o.args[3]);
  if (!micros.ok()) return Fail(err, micros.status());
  v1::CreditRequest req;
  req.set_tenant(o.args[2]);
  req.set_micros(*micros);
  req.set_note(o.note);
  auto resp = Call(o, rpc::kBillingCredit, req);
  if (!resp.ok()) return Fail(err, resp.status());
  if (o.output == "json") {
    out << FormatJson(*resp) << "\n";
    return 0;
  }
  const v1::TenantAccount& a = resp->account();
  out << "Tenant " << a.tenant() << ": credited " << MoneyMicros(a.credit_micros()) << ", charged "
      << MoneyMicros(a.charged_micros()) << ", balance "
      << MoneyMicros(a.credit_micros() - a.charged_micros())
      << (a.charged_micros() >= a.credit_micros() ? " (over budget: new jobs are held)" : "")
      << "\n";
  return 0;
}

}  // namespace snn
