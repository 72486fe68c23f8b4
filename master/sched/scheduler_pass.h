// One scheduling pass (PlanPass, master/sched/scheduler.h) as an object: its pools, what it
// placed and decided so far. Internal to the scheduler: scheduler.cc considers the jobs,
// scheduler_pools.cc builds the pools and grows elastic jobs.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "master/sched/license_counts.h"
#include "master/sched/pool_state.h"
#include "master/sched/quota_tree.h"
#include "master/sched/running_limits.h"
#include "master/sched/scheduler_types.h"
#include "master/sched/wait_reason.h"
#include "master/sched/window_limits.h"

namespace snn::scheduler_pass {

// Names that jobs of one pool usually share by pointer: compared by pointer first.
inline bool SameName(const std::string* a, const std::string* b) {
  return a == b || (a != nullptr && b != nullptr && *a == *b);
}

class Pass {
 public:
  Pass(SchedulerInput& in, const SchedulerPolicy& policy)
      : in_(in),
        policy_(policy),
        running_limits_(policy, in.running),
        window_limits_(policy, in_),
        licenses_(policy, in.running),
        track_use_(!policy.tenant_quotas.empty() || !policy.queue_quotas.empty() ||
                   policy.quota_trees != nullptr) {}

  SchedulePlan Run();

 private:
  // The order shortest-first backfill tries `later` in (indices into it).
  std::vector<uint32_t> ShortestFirst(const PoolState& pool,
                                      const std::vector<const PendingJob*>& later) const;
  void BuildPools();
  PoolState& AddPool(const std::string& name, std::vector<BoardCapacity> boards);
  void Consider(const PendingJob& p, bool as_backfill);
  // Consider on a pool of one-core boards: counted, not placed.
  void ConsiderUnits(PoolState& pool, const PendingJob& p);
  bool OverQuota(const PendingJob& p);
  // A job's use counters and quotas, looked up once per (tenant, queue, pool) a pass meets.
  struct QuotaSlot {
    uint64_t* tenant_use = nullptr;
    uint64_t* queue_use = nullptr;
    const Quota* tenant_quota = nullptr;  // null: none
    const Quota* queue_quota = nullptr;
    QuotaTreeUse* tree = nullptr;  // its pool's account tree, if its tenant is in one
    int tree_node = -1;
  };
  QuotaSlot& SlotOf(const PendingJob& p);
  // The account tree of `job`'s pool and its tenant's node there; {null, -1}: none.
  std::pair<QuotaTreeUse*, int> TreeNodeOf(const SchedJob& job);
  // Whether the account tree keeps `p` from starting now (it waits, saying why, or preempts
  // what other subtrees borrowed, holding the room).
  bool TreeBlocks(PoolState& pool, const PendingJob& p);
  // A job's cores start (sign 1) or stop (-1) counting against its tenant, queue and tree.
  void AddUse(const SchedJob& job, uint64_t cores, int sign);
  void Start(PoolState& pool, const SchedJob& job, const Gang& gang, bool long_job);
  // Room for a job that cannot start: extra replicas given back, then preemption.
  // `for_tree`: the job is within its account's share and the tree blocks it: only jobs of
  // subtrees that borrow are preempted, until both its share and its room are free.
  bool TryReclaim(PoolState& pool, const SchedJob& job, bool for_tree = false);
  // What may be preempted for `job`, as a heap: popped (PopVictim), youngest of the lowest tier
  // first. A heap, not a sorted list: a reclaim usually needs a few of many thousands.
  std::vector<const SchedJob*> PreemptionVictims(PoolState& pool, const SchedJob& job,
                                                 bool for_tree);
  static const SchedJob* PopVictim(std::vector<const SchedJob*>& heap);
  void GiveBackExtras(const std::vector<std::pair<const SchedJob*, const TaskPlacement*>>& extras,
                      size_t count, const SchedJob& for_job);
  // Places one replica of `job` on `pool`'s board `index` (mirrored in the board's other pools).
  // It runs until `end_ms` by its time limit.
  void Occupy(PoolState& pool, size_t index, const v1::Resources& r, const Rect& rect,
              bool long_job, int64_t end_ms);
  void Grow(PoolState& pool);
  bool WithinLimits(const SchedJob& job, uint64_t more_cores);
  void Wait(uint64_t job_id, std::shared_ptr<const std::string> reason, int64_t expected = 0) {
    if (!policy_.explain) return;
    plan_.waits.push_back(WaitDecision{job_id, std::move(reason), expected});
  }
  void Wait(const SchedJob& job, std::shared_ptr<const std::string> reason, int64_t expected = 0) {
    Wait(job.id, std::move(reason), expected);
  }
  void Wait(const SchedJob& job, std::string reason, int64_t expected = 0) {
    Wait(job, std::make_shared<const std::string>(std::move(reason)), expected);
  }
  // Without words to give, a pool with no free core left ends its backfill: nothing in it can
  // start.
  bool Full(const PoolState& pool) const {
    if (policy_.explain) return false;
    return pool.units ? pool.units->free == 0 : pool.boards.free_cores() == 0;
  }
  // Why advance reservations keep a job off boards that fit it ("" if they do not).
  std::string ClosureWords(PoolState& pool, const PendingJob& p);
  std::string Explain(PoolState& pool, const SchedJob& job) {
    return policy_.explain ? NoRoomReason(pool, job) : std::string();
  }
  uint64_t& TenantUse(const SchedJob& j) { return use_.Tenant(j.tenant, j.pool); }
  uint64_t& QueueUse(const SchedJob& j) { return use_.Queue(j.queue, j.pool); }

  SchedulerInput& in_;
  const SchedulerPolicy& policy_;
  SchedulePlan plan_;
  std::map<std::string, PoolState> pools_;
  // Boards in several pools: a placement in one is mirrored in the others.
  std::map<std::pair<std::string, uint32_t>, std::vector<std::pair<PoolState*, size_t>>> shared_;
  QuotaUse use_;  // of the running jobs, and of what this pass starts
  std::map<std::string, QuotaTreeUse, std::less<>> trees_;  // by pool: use_ in account trees
  // Jobs the tree holds back, by their tree node and shape: the tree's version then, whether no
  // reclaim was found, and the words. Jobs of one tenant and shape that come while the tree is
  // as it was are settled from here (a pass meets thousands).
  struct TreeWait {
    uint64_t version = 0;
    bool no_reclaim = false;
    std::shared_ptr<const std::string> words;
  };
  using TreeWaitKey = std::tuple<const QuotaTreeUse*, int, uint64_t, bool, uint32_t, uint32_t,
                                 const std::string*, const std::string*>;
  std::map<TreeWaitKey, TreeWait> tree_waits_;
  // By the names' pointers (interned by the master's views, so few).
  std::map<std::tuple<const std::string*, const std::string*, const std::string*>, QuotaSlot>
      slots_;
  std::set<uint64_t> preempted_;
  RunningLimits running_limits_;
  WindowLimits window_limits_;
  LicenseCounts licenses_;
  std::set<std::pair<uint64_t, uint32_t>> given_back_;  // (job, task index)
  std::set<uint64_t> giving_back_;                      // jobs that give extras back
  const bool track_use_;                                // quotas or queue limits to keep
  size_t open_pools_ = 0;                               // pools not blocked (FCFS)
  PoolState* last_pool_ = nullptr;                      // the pool of the job considered last
  const std::string* last_pool_name_ = nullptr;
};

}  // namespace snn::scheduler_pass
