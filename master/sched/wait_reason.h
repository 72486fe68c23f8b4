// The words a scheduling pass gives a job that waits: what it asks for, and why no board of its
// pool can take it now. Internal to the scheduler (master/sched/scheduler.cc).
#pragma once

#include <string>

#include "master/sched/pool_state.h"

namespace snn {

// "4x4, 100 ksps, 1 streams on a sim-v1 board".
std::string DescribeRequest(const v1::Resources& r);

// Why `job` cannot start on `pool`'s boards now: none could ever hold it, no contiguous region
// is free on the roomiest board, or not enough of everything.
std::string NoRoomReason(const PoolState& pool, const SchedJob& job);

}  // namespace snn
