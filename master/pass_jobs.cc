#include "master/pass_jobs.h"

namespace snn {

SchedulerInput CollectPassInput(JobTable& jobs, QueueOrder& order,
                                std::vector<BoardCapacity> boards, int64_t now_ms) {
  std::map<std::string, uint64_t> pool_cores;
  for (const auto& b : boards) {
    for (const auto& p : b.pools) pool_cores[p] += b.grid ? b.grid->live_count() : 0;
  }
  SchedulerInput in;
  in.now_ms = now_ms;
  in.boards = std::move(boards);
  const std::vector<uint32_t> order_list =
      order.Order(jobs.views(), jobs.TakeCoreTime(now_ms), pool_cores, now_ms);
  const std::span<const PendingEntry> pending = jobs.views().pending();
  in.pending.reserve(order_list.size());
  for (uint32_t slot : order_list) in.pending.push_back(pending[slot].job);
  in.running = jobs.views().running();
  in.use = &jobs.views().use();
  return in;
}

}  // namespace snn
