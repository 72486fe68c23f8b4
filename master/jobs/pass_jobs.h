// The input of one scheduling pass, from the master's job table: the pending jobs in priority
// order and the running jobs. The master and the scheduling bench build a pass the same way,
// through this.
// Thread contract: the master's io thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "master/jobs/job_table.h"
#include "master/sched/queue_order.h"
#include "master/sched/scheduler.h"

namespace snn {

// The input of one pass: orders the pending jobs (charging fair share up to `now_ms`) and
// takes their and the running jobs' views from the job table, which must not change until the
// pass is planned. `boards`: every schedulable board; pool sizes (the size factor) are theirs.
// `head_depth` > 0: only the queue's first jobs, by QueueOrder::OrderHead (nothing charged).
SchedulerInput CollectPassInput(JobTable& jobs, QueueOrder& order,
                                std::vector<BoardCapacity> boards, int64_t now_ms,
                                size_t head_depth = 0);

}  // namespace snn
