// snnctl's accounting commands, for Slurm users' sacct and sreport habits:
//   usage [--user U] [--pool P] [--state S] [--since T] [--until T] [--all-tenants]
//         task attempts that ran in the window (ended ones from the durable usage records,
//         running ones as they stand): user, tenant, pool, board type, start, end, elapsed,
//         cores, core-seconds, KSPS-seconds, spikes, exit and state; -o json or --csv.
//   report [--from T] [--to T] [--by-user] [--all-tenants]
//         per tenant (and user) per pool: core-hours, KSPS-hours, jobs, mean wait; and each
//         pool's utilization (default period: this month, UTC).
#pragma once

#include <ostream>
#include <string>

#include "cli/cli_options.h"
#include "proto/billing.pb.h"

namespace snn {

int Usage(const CliOptions& o, std::ostream& out, std::ostream& err);
int Report(const CliOptions& o, std::ostream& out, std::ostream& err);

// The usage rows as a table, or as CSV with a header line (`csv`).
std::string FormatUsage(const v1::UsageResponse& usage, bool csv);
std::string FormatReport(const v1::ReportResponse& report, bool by_user);

}  // namespace snn
