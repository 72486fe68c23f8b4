// The jobs of one scheduling pass as the scheduler sees them, built from the master's job
// table: the pending jobs in priority order and the running jobs. The master and the
// scheduling bench build a pass the same way, through this.
// Thread contract: the master's io thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "master/job_table.h"
#include "master/queue_order.h"
#include "master/scheduler.h"
#include "proto/policy.pb.h"

namespace snn {

// One job as the scheduler sees it (a running job with its active tasks).
SchedJob ToSchedJob(const v1::JobRecord& job, const v1::SchedulingConfig& config);

struct PassJobs {
  std::vector<SchedJob> pending;  // in priority order
  std::vector<SchedJob> running;
};

// Orders the pending jobs (charging fair share up to `now_ms`) and converts both kinds.
// `pool_cores`: live cores per pool. The result points into `jobs`' records.
PassJobs CollectPassJobs(JobTable& jobs, QueueOrder& order, const v1::SchedulingConfig& config,
                         const std::map<std::string, uint64_t>& pool_cores, int64_t now_ms);

// The scheduler's input for `jobs` on `boards`.
SchedulerInput MakeSchedulerInput(const PassJobs& jobs, std::vector<BoardCapacity> boards,
                                  int64_t now_ms);

}  // namespace snn
