// The agent's authoritative bookkeeping of one board: which rectangle of cores, routing
// channels, pulse input queue and how much KSPS each task holds. Cores come as one rectangle
// of free live cores from the shared allocator (best fit); logical core i is the i-th core of
// the rectangle in row-major order, with its relay paths from the board's I/O port.
// Thread contract: agent io thread only.
#pragma once

#include <map>
#include <vector>

#include "common/base/core_grid.h"
#include "nodeagent/hal/board.h"
#include "proto/job.pb.h"

namespace snn {

class BoardAllocator {
 public:
  explicit BoardAllocator(const v1::BoardInfo& info);

  // Chooses a rectangle (the master's `hint` if it is still free and fits), channels and a
  // queue for `task`; kResourceExhausted, saying what is missing, if the board lacks them.
  Result<v1::TaskMapping> Allocate(const TaskKey& task, const v1::Resources& r,
                                   const v1::CoreRect* hint = nullptr);
  // Takes back exactly `mapping` for a task found running after an agent restart.
  Status Claim(const TaskKey& task, const v1::Resources& r, const v1::TaskMapping& mapping);
  void Free(const TaskKey& task);

  // A core that died: never handed out again (a task holding it keeps it until it ends).
  void MarkDead(uint32_t x, uint32_t y);

  const CoreGrid& grid() const { return grid_; }
  uint32_t free_cores() const { return grid_.free_count(); }
  uint32_t ksps_used() const { return ksps_used_; }

 private:
  struct Holding {
    v1::TaskMapping mapping;
    Rect rect;
    uint32_t ksps = 0;
  };

  // Constant after construction.
  const uint32_t ksps_total_;
  const v1::CoreXY io_port_;

  CoreGrid grid_;
  std::vector<bool> channel_busy_;
  uint32_t ksps_used_ = 0;
  std::map<TaskKey, Holding> holdings_;
};

}  // namespace snn
