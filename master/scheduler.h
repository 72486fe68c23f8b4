// The scheduler core: pure. It takes the pending jobs, every schedulable board's free capacity
// and free-core map, and `now`, and returns which jobs start where (down to the rectangle of
// cores) and why the others wait. No I/O, no clock, no daemon state: the master and tests (and
// later the trace simulator) call it the same way.
//
// Policy: within each pool, jobs in priority order, then submit order. Each replica goes to the
// board where the shared rectangle allocator finds the best fit (least waste, most contact),
// then the healthier board. A job's `min` replicas are placed together or not at all. When a
// pool's head job cannot start, later jobs of that pool wait too (no backfill yet), so a large
// job is never starved by small ones.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/core_grid.h"
#include "common/rect_allocator.h"
#include "master/job_table.h"

namespace snn {

struct BoardCapacity {
  std::string node;
  uint32_t board = 0;
  std::string type;
  std::vector<std::string> pools;
  uint32_t health = 100;
  uint32_t ksps_total = 0, streams_total = 0;
  uint32_t ksps_free = 0, streams_free = 0;
  Rect largest_live;                     // on the empty board: bounds what can ever fit
  std::shared_ptr<const CoreGrid> grid;  // the free map now (shared, never modified here)

  // Scratch for one pass: a private copy of the map once something is placed on it, and its
  // maximal empty rectangles while unchanged.
  std::shared_ptr<CoreGrid> own;
  std::optional<std::vector<Rect>> mers;
  const CoreGrid& current() const { return own ? *own : *grid; }
};

struct TaskPlacement {
  std::string node;
  uint32_t board = 0;
  Rect rect;
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

// Whether this board, empty, could hold one task with resources `r`.
bool BoardCanEverHold(const BoardCapacity& board, const v1::Resources& r);

}  // namespace snn
