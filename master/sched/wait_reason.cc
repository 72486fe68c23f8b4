#include "master/sched/wait_reason.h"

#include "common/base/job_validation.h"

namespace snn {

std::string DescribeRequest(const v1::Resources& r) {
  std::string s = CoreRequestOf(r).ToString() + ", " + std::to_string(r.ksps()) + " ksps, " +
                  std::to_string(r.streams()) + " streams";
  if (!AnyBoardType(r.board_type())) s += " on a " + r.board_type() + " board";
  if (!r.constraints().empty()) s += " where " + r.constraints();
  return s;
}

std::string NoRoomReason(const PoolState& pool, const SchedJob& job) {
  const v1::Resources& r = *job.resources;
  const CoreRequest request = CoreRequestOf(r);
  // Enough of everything but a contiguous region: an example from the boards with most room.
  const BoardCapacity* roomiest = pool.boards.Roomiest(r, request.cores(), 512);
  bool any_could = false;
  for (size_t i = 0; i < pool.boards.size() && !any_could; ++i) {
    any_could = BoardCanEverHold(pool.boards.board(i), r);
  }
  if (!any_could) {
    // A board that could hold it at its rated throughput, but measures less now.
    for (size_t i = 0; i < pool.boards.size(); ++i) {
      BoardCapacity rated = pool.boards.board(i);
      if (rated.ksps_nominal <= rated.ksps_total) continue;
      rated.ksps_total = rated.ksps_nominal;
      if (!BoardCanEverHold(rated, r)) continue;
      return "waiting for a board in pool '" + job.pool + "' that can hold " + DescribeRequest(r) +
             ": " + rated.node + "/board" + std::to_string(rated.board) + " is rated for " +
             std::to_string(rated.ksps_nominal) + " ksps but measures " +
             std::to_string(pool.boards.board(i).ksps_total) + " now";
    }
    return "waiting for a board in pool '" + job.pool + "' that can hold " + DescribeRequest(r) +
           " (none is available now: down or drained)";
  }
  if (roomiest != nullptr && job.replicas == 1) {
    const Rect largest = LargestEmptyRectangle(roomiest->current());
    return "waiting for a contiguous " +
           (request.explicit_shape() ? request.ToString() + " region"
                                     : "region of " + request.ToString()) +
           ": " + roomiest->node + "/board" + std::to_string(roomiest->board) + " has " +
           std::to_string(roomiest->current().free_count()) +
           " free cores, but its largest free rectangle is " + std::to_string(largest.w) + "x" +
           std::to_string(largest.h);
  }
  const std::string gang =
      job.replicas > 1 ? std::to_string(job.replicas) + " replicas of " : std::string();
  return "waiting for resources: " + gang + DescribeRequest(r) + " on one board each";
}

}  // namespace snn
