// Billing arithmetic, pure: what one task attempt costs at list prices, and an invoice for a
// tenant and period from its usage records. A task attempt is billed for its run time, at least
// the policy's minimum, times the cores and the KSPS budget it held, at its board type's prices.
// An invoice has one line per board type and resource (core-hours, KSPS-hours), each rounded to
// the cent; the volume discount of the highest tier its core-hours reach comes off the subtotal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/billing.pb.h"

namespace snn {

// The billed duration of a usage record, ms: a task attempt's run time, at least the minimum;
// a step's 0 (its session is billed); an experiment record's board time; a service's held time
// less its users' board time.
int64_t BilledMs(const v1::UsageRecord& r, const v1::BillingConfig& c);

// Its cost at list prices, in micro-units of the currency (0 for an unpriced board type).
int64_t ChargeMicros(const v1::UsageRecord& r, const v1::BillingConfig& c);

// The invoice of `tenant` for the task attempts in `records` (the caller picks those that
// ended in [from_ms, to_ms); records of other tenants are ignored).
v1::Invoice ComputeInvoice(const std::string& tenant, int64_t from_ms, int64_t to_ms,
                           const std::vector<v1::UsageRecord>& records, const v1::BillingConfig& c);

// "12.34" from 1234 cents; "-0.05" from -5.
std::string FormatCents(int64_t cents);

}  // namespace snn
