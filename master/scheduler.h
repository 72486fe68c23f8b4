// The scheduler core: pure. It takes the pending jobs, the free capacity of every schedulable
// board and `now`, and returns which jobs start where and why the others wait. No I/O, no clock,
// no daemon state: the master and tests (and later the trace simulator) call it the same way.
//
// Policy (the first one): within each pool, jobs in priority order, then submit order; each
// replica goes to the first board in the pool with enough free cores, KSPS and streams. A job's
// `min` replicas are placed together or not at all. When a pool's head job cannot start, later
// jobs of that pool wait too (no backfill yet), so a large job is never starved by small ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "master/job_table.h"

namespace snn {

struct BoardCapacity {
  std::string node;
  uint32_t board = 0;
  std::string type;
  std::vector<std::string> pools;
  // Totals (live cores) and what is free now.
  uint32_t cores_total = 0, ksps_total = 0, streams_total = 0;
  uint32_t cores_free = 0, ksps_free = 0, streams_free = 0;
};

struct TaskPlacement {
  std::string node;
  uint32_t board = 0;
};

struct StartDecision {
  uint64_t job_id = 0;
  std::vector<TaskPlacement> tasks;  // one per replica
};

struct WaitDecision {
  uint64_t job_id = 0;
  std::string reason;
};

struct SchedulePlan {
  std::vector<StartDecision> starts;
  std::vector<WaitDecision> waits;  // the head of each blocked pool
};

SchedulePlan PlanStarts(const JobTable& jobs, std::vector<BoardCapacity> boards, int64_t now_ms);

// Whether a board of this type in this pool could hold `r` at all, when empty.
bool BoardCanEverHold(const BoardCapacity& board, const v1::Resources& r);

}  // namespace snn
