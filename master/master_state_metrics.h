// The master's state as Prometheus gauges, computed at a scrape from what the master holds:
// live jobs by state, pool and tenant; ended jobs by state; nodes and boards by state; cores,
// KSPS and streams used and free by pool and board type; tenants' credits and charges. Its
// cost is one walk over the live jobs, the nodes and the accounts, paid only when scraped.
// Thread contract: on the master's io thread.
#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "master/billing/billing_ledger.h"
#include "master/jobs/job_archive.h"
#include "master/jobs/job_table.h"
#include "master/nodes/node_registry.h"

namespace snn {

std::vector<prometheus::MetricFamily> MasterStateMetrics(const JobTable& jobs,
                                                         const JobArchive& archive,
                                                         const NodeRegistry& nodes,
                                                         const BillingLedger& billing);

}  // namespace snn
