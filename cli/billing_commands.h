// snnctl's billing commands: `invoice [TENANT] [--from T] [--to T]` (a tenant's invoice and
// account) and `tenant credit TENANT AMOUNT [--note TEXT]` (admin).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "cli/cli_options.h"
#include "common/base/status.h"
#include "proto/billing.pb.h"

namespace snn {

int Invoice(const CliOptions& o, std::ostream& out, std::ostream& err);
int TenantCredit(const CliOptions& o, std::ostream& out, std::ostream& err);

// An amount of money as written ("100", "12.50", "-5") in micro-units; refused if it is not a
// finite number of at most a billion.
Result<int64_t> ParseAmountMicros(const std::string& text);

// The invoice as a table: its lines, subtotal, discount and total, and the tenant's account.
std::string FormatInvoice(const v1::InvoiceResponse& resp);

}  // namespace snn
