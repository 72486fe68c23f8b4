#include "master/jobs/pass_jobs.h"

#include "master/jobs/job_arrays.h"

namespace snn {

SchedulerInput CollectPassInput(JobTable& jobs, QueueOrder& order,
                                std::vector<BoardCapacity> boards, int64_t now_ms,
                                size_t head_depth) {
  SchedulerInput in;
  in.now_ms = now_ms;
  std::vector<uint32_t> order_list;
  if (head_depth > 0 && order.has_order()) {
    order_list = order.OrderHead(jobs.views(), head_depth);
  } else {
    std::map<std::string, uint64_t> pool_cores;
    for (const auto& b : boards) {
      for (const auto& p : b.pools) pool_cores[p] += b.grid ? b.grid->live_count() : 0;
    }
    order_list = order.Order(jobs.views(), jobs.TakeCoreTime(now_ms), pool_cores, now_ms);
  }
  in.boards = std::move(boards);
  const std::span<const PendingEntry> pending = jobs.views().pending();
  in.pending.reserve(order_list.size());
  for (uint32_t slot : order_list) {
    const PendingJob& p = pending[slot].job;
    if (!p.array) {
      in.pending.push_back(p);
      continue;
    }
    // An array: one entry for each element it may start now, each started on its own.
    const v1::JobRecord* array = jobs.Find(p.id);
    const uint32_t n = array == nullptr ? 0 : ArrayStartsAllowed(*array, jobs.ArrayActive(p.id));
    for (uint32_t i = 0; i < n; ++i) in.pending.push_back(p);
  }
  in.running = jobs.views().running();
  in.use = &jobs.views().use();
  return in;
}

}  // namespace snn
