// The agent's authoritative bookkeeping of one board: which cores, routing channels, pulse
// input queues and how much KSPS each task holds. Cores are taken in row-major order of free
// live cores for now; contiguous rectangles come with the rectangle allocator.
// Thread contract: agent io thread only.
#pragma once

#include <map>
#include <vector>

#include "nodeagent/hal/board.h"
#include "proto/job.pb.h"

namespace snn {

class BoardAllocator {
 public:
  explicit BoardAllocator(const v1::BoardInfo& info);

  // Chooses cores, channels and a queue for `task`; kResourceExhausted if the board lacks them.
  Result<v1::TaskMapping> Allocate(const TaskKey& task, const v1::Resources& r);
  // Takes back exactly `mapping` (used when re-attaching); fails if any part is taken.
  Status Claim(const TaskKey& task, const v1::Resources& r, const v1::TaskMapping& mapping);
  void Free(const TaskKey& task);

  uint32_t free_cores() const { return free_cores_; }
  uint32_t ksps_used() const { return ksps_used_; }

 private:
  struct Holding {
    v1::TaskMapping mapping;
    uint32_t ksps = 0;
  };
  size_t Cell(uint32_t x, uint32_t y) const { return size_t{y} * width_ + x; }

  // Constant after construction.
  const uint32_t width_, height_, ksps_total_;

  std::vector<bool> busy_;     // by cell; dead cores are busy forever
  std::vector<bool> channel_busy_;
  uint32_t free_cores_ = 0;
  uint32_t ksps_used_ = 0;
  std::map<TaskKey, Holding> holdings_;
};

}  // namespace snn
