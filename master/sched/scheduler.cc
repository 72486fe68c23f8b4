#include "master/sched/scheduler.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "common/base/job_validation.h"
#include "common/base/utc_time.h"
#include "master/sched/scheduler_pass.h"

namespace snn {
namespace scheduler_pass {

Pass::QuotaSlot& Pass::SlotOf(const PendingJob& p) {
  auto [it, added] = slots_.try_emplace({p.tenant, p.queue, p.pool});
  QuotaSlot& slot = it->second;
  if (added) {
    slot.tenant_use = &use_.Tenant(*p.tenant, *p.pool);
    slot.queue_use = &use_.Queue(*p.queue, *p.pool);
    auto q = policy_.tenant_quotas.find(NamePair(*p.tenant, *p.pool));
    if (q != policy_.tenant_quotas.end()) slot.tenant_quota = &q->second;
    auto l = policy_.queue_quotas.find(NamePair(*p.queue, *p.pool));
    if (l != policy_.queue_quotas.end()) slot.queue_quota = &l->second;
    if (auto t = trees_.find(*p.pool); t != trees_.end()) {
      slot.tree_node = t->second.tree().Find(*p.tenant);
      if (slot.tree_node >= 0) slot.tree = &t->second;
    }
  }
  return slot;
}

bool Pass::OverQuota(const PendingJob& p) {
  if (p.hold != nullptr) {
    Wait(p.id, *p.hold);
    return true;
  }
  if (!policy_.held_tenants.empty()) {
    if (auto held = policy_.held_tenants.find(*p.tenant); held != policy_.held_tenants.end()) {
      Wait(p.id, held->second);
      return true;
    }
  }
  if (auto reason = running_limits_.Blocks(p)) {
    Wait(p.id, std::move(reason));
    return true;
  }
  if (auto reason = window_limits_.Blocks(p)) {
    Wait(p.id, std::move(reason));
    return true;
  }
  if (p.licenses) {
    if (auto reason = licenses_.Blocks(*p.job)) {
      Wait(p.id, std::move(reason));
      return true;
    }
  }
  if (!track_use_) return false;
  const QuotaSlot& slot = SlotOf(p);
  const uint64_t cores = uint64_t{p.cores} * p.replicas;
  auto over = [&](const Quota* quota, uint64_t use, const char* kind, const std::string& name) {
    if (quota == nullptr || use + cores <= quota->limit) return false;
    Wait(p.id, std::make_shared<const std::string>(
                   kind + name + " is at its limit in pool '" + *p.pool +
                   "': " + std::to_string(use) + " of " + std::to_string(quota->limit) +
                   " cores in use, and this job needs " + std::to_string(cores)));
    return true;
  };
  return over(slot.tenant_quota, *slot.tenant_use, "tenant ", *p.tenant) ||
         over(slot.queue_quota, *slot.queue_use, "queue ", *p.queue);
}

void Pass::Start(PoolState& pool, const SchedJob& job, const Gang& gang, bool long_job) {
  StartDecision start{job.id, {}};
  start.backfilled = pool.reserved;
  const v1::Resources& r = *job.resources;
  for (const auto& [index, rect] : gang) {
    const BoardCapacity& b = pool.boards.board(index);
    start.tasks.push_back(TaskPlacement{b.node, b.board, rect});
    Occupy(pool, index, r, rect, long_job, in_.now_ms + job.time_limit_ms);
  }
  AddUse(job, job.cores(), 1);
  pool.LeftShare(job.id);
  running_limits_.Started(job);
  window_limits_.Started(job);
  licenses_.Started(job);
  plan_.starts.push_back(std::move(start));
}

void Pass::Occupy(PoolState& pool, size_t index, const v1::Resources& r, const Rect& rect,
                  bool long_job, int64_t end_ms) {
  const BoardCapacity& b = pool.boards.board(index);
  pool.placed.push_back(PoolState::Placed{end_ms, index, rect, &r});
  if (b.pools.size() > 1) {
    for (auto& [other, i] : shared_[{b.node, b.board}]) {
      if (other == &pool) continue;
      other->boards.Take(i, r, rect);
      other->placed.push_back(PoolState::Placed{end_ms, i, rect, &r});
    }
  }
  if (long_job && pool.holds[index]) {  // still running when the reservation starts
    auto& h = *pool.holds[index];
    h.ksps_left -= std::min(h.ksps_left, r.ksps());
    h.streams_left -= std::min(h.streams_left, r.streams());
  }
}

void Pass::Consider(const PendingJob& p, bool as_backfill) {
  if (!SameName(p.pool, last_pool_name_)) {  // jobs of one pool come in runs: looked up once
    last_pool_ = &pools_.find(*p.pool)->second;
  }
  last_pool_name_ = p.pool;
  PoolState& pool = *last_pool_;
  const SchedJob& job = *p.job;
  if (pool.boards.size() == 0 && !pool.units) {
    return Wait(job, "no board is available in pool '" + job.pool + "'");
  }
  if (pool.blocked) return;  // behind the job that holds its pool (first come, first served)
  if (pool.reserved && !as_backfill) {
    pool.backfill.push_back(&p);
    return;
  }
  if (OverQuota(p)) {
    pool.LeftShare(job.id);  // not waiting for room
    return;
  }
  if (!trees_.empty() && TreeBlocks(pool, p)) return;
  if (pool.units) return ConsiderUnits(pool, p);
  // A full pool starts nothing; without words to give, nothing more to work out.
  if (pool.boards.free_cores() == 0 && (pool.reserved || !policy_.explain)) return;
  const bool long_job = pool.reserved && in_.now_ms + p.time_limit_ms > pool.shadow_ms;
  if (in_.now_ms + p.time_limit_ms > pool.ends_by_ms) {
    return Wait(job, "its time limit runs past the end of reservation " + *pool.reservation +
                         " at " + FormatUtcTime(pool.ends_by_ms) +
                         ": it would not start in this reservation");
  }
  const auto signature =
      std::make_tuple(p.cores, p.shape_width, p.shape_height, p.ksps, p.streams, p.board_type,
                      p.constraints, p.replicas, long_job, pool.FailedKeyLimit(p.time_limit_ms));
  pool.boards.SetWindow(in_.now_ms, in_.now_ms + p.time_limit_ms);
  if (pool.reserved) {
    if (auto f = pool.failed.find(signature); f != pool.failed.end()) return Wait(p.id, f->second);
  }
  // A job that ends before the reservation starts uses its room first, leaving the rest to
  // jobs that may not touch it.
  if (auto gang = PlaceGang(pool.boards, job, long_job ? &pool.holds : nullptr,
                            pool.reserved && !long_job ? &pool.unheld : nullptr)) {
    return Start(pool, job, *gang, long_job);
  }
  if (pool.reserved) {
    std::string why = Explain(pool, job);
    if (pool.closures && policy_.explain) why += ClosureWords(pool, p);
    if (long_job && policy_.explain) {
      why += "; starting now could delay " + pool.HolderWords();
    }
    auto shared = std::make_shared<const std::string>(std::move(why));
    pool.failed[signature] = shared;
    return Wait(job, std::move(shared));
  }
  if (TryReclaim(pool, job)) return;
  const std::string closed = pool.closures && policy_.explain ? ClosureWords(pool, p) : "";
  if (policy_.backfill && Reserve(pool, job, in_.now_ms)) {
    pool.holder_starving = p.starving;
    licenses_.HoldFor(job);  // what it will need when its reservation starts
    return Wait(job, Explain(pool, job) + closed + "; it holds its pool's reservation",
                pool.shadow_ms);
  }
  if (!policy_.backfill) {
    licenses_.HoldFor(job);
    pool.blocked = true;
    pool.holder = &job;
    --open_pools_;
  }
  Wait(job, Explain(pool, job) + closed);
}

std::string Pass::ClosureWords(PoolState& pool, const PendingJob& p) {
  const int64_t from = in_.now_ms, to = in_.now_ms + p.time_limit_ms;
  const BoardClosure* first = nullptr;
  int64_t start = 0;
  auto look_at = [&](const BoardCapacity& b) {
    if (!b.closures || !BoardFits(*p.job->resources, b)) return;
    int64_t s = 0;
    const BoardClosure* c = FirstMet(*b.closures, from, to, &s);
    if (c != nullptr && (first == nullptr || s < start)) {
      first = c;
      start = s;
    }
  };
  if (pool.units) look_at(pool.units->board);
  for (size_t i = 0; i < pool.boards.size(); ++i) look_at(pool.boards.board(i));
  if (first == nullptr) return "";
  return start <= from ? "; boards of reservation " + first->reservation + " are closed to it"
                       : "; boards of reservation " + first->reservation + " close at " +
                             FormatUtcTime(start) + ", before its time limit would end";
}

void Pass::ConsiderUnits(PoolState& pool, const PendingJob& p) {
  const SchedJob& job = *p.job;
  PoolState::Units& units = *pool.units;
  const BoardCapacity& c = units.board;
  const uint64_t need = p.replicas;
  const bool one_core = p.cores == 1 && (p.shape_width == 0 || p.shape_width == 1) &&
                        (p.shape_height == 0 || p.shape_height == 1);
  const bool fits_one = one_core && BoardFits(*job.resources, c) && p.ksps <= c.ksps_total &&
                        p.streams <= c.streams_total;
  // Without words to give (the simulator), no wait is recorded.
  auto wait = [&](const auto& words, int64_t expected = 0) {
    if (policy_.explain) Wait(job, words(), expected);
  };
  if (!fits_one || need > c.units) {
    return wait([&] {
      return "pool '" + job.pool + "' has " + std::to_string(c.units) + " one-core " + c.type +
             " boards: it can never hold " +
             (need > 1 ? std::to_string(need) + " replicas of " : std::string()) +
             DescribeRequest(*job.resources);
    });
  }
  const bool long_job = pool.reserved && in_.now_ms + p.time_limit_ms > pool.shadow_ms;
  // Advance reservations close the whole class: its run must miss them.
  const bool closed = c.closures && AnyMeets(*c.closures, in_.now_ms, in_.now_ms + p.time_limit_ms);
  if (!closed && need <= units.free && (!long_job || need <= units.extra)) {
    units.free -= need;
    if (long_job) units.extra -= need;
    units.placed.emplace_back(in_.now_ms + p.time_limit_ms, need);
    StartDecision start{job.id, {TaskPlacement{c.node, c.board, Rect{0, 0, 1, 1}}}};
    start.tasks.back().count = static_cast<uint32_t>(need);
    start.backfilled = pool.reserved;
    AddUse(job, need, 1);
    pool.LeftShare(job.id);
    plan_.starts.push_back(std::move(start));
    return;
  }
  auto waiting = [&] {
    return "waiting for " + std::to_string(need) + " of the " + std::to_string(c.units) +
           " one-core boards of pool '" + job.pool + "': " + std::to_string(units.free) + " free" +
           (closed ? ClosureWords(pool, p) : "");
  };
  if (pool.reserved) {
    if (!long_job) return wait(waiting);
    return wait([&] { return waiting() + "; starting now could delay " + pool.HolderWords(); });
  }
  if (policy_.backfill && ReserveUnits(pool, job, need, policy_.textbook_easy, in_.now_ms)) {
    pool.holder_starving = p.starving;
    return wait([&] { return waiting() + "; it holds its pool's reservation"; }, pool.shadow_ms);
  }
  if (!policy_.backfill) {
    pool.blocked = true;
    pool.holder = &job;
    --open_pools_;
  }
  wait(waiting);
}

std::vector<uint32_t> Pass::ShortestFirst(const PoolState& pool,
                                          const std::vector<const PendingJob*>& later) const {
  // Old jobs first, in queue order; then by time limit, keeping the order among equals; while
  // the reservation's holder starves, the jobs that would run past its start last, by priority.
  const int64_t age_first = policy_.backfill_age_first_after_ms;
  const bool by_priority =
      policy_.backfill_past_reservation_by_priority && pool.reserved && pool.holder_starving;
  std::vector<std::pair<int64_t, uint32_t>> by_limit;  // old ones first (INT64_MIN), in order
  std::vector<uint32_t> past;                          // past the starving holder's reservation
  by_limit.reserve(later.size());
  for (uint32_t i = 0; i < later.size(); ++i) {
    const PendingJob& p = *later[i];
    if (age_first > 0 && in_.now_ms - p.submit_ms > age_first) {
      by_limit.emplace_back(INT64_MIN, i);
    } else if (by_priority && in_.now_ms + p.time_limit_ms > pool.shadow_ms) {
      past.push_back(i);
    } else {
      by_limit.emplace_back(p.time_limit_ms, i);
    }
  }
  std::sort(by_limit.begin(), by_limit.end());
  std::sort(past.begin(), past.end(), [&](uint32_t a, uint32_t b) {
    const PendingJob &x = *later[a], &y = *later[b];
    if (x.tier != y.tier) return x.tier > y.tier;
    if (x.priority != y.priority) return x.priority > y.priority;
    return a < b;
  });
  std::vector<uint32_t> order;
  order.reserve(later.size());
  for (const auto& [key, i] : by_limit) order.push_back(i);
  order.insert(order.end(), past.begin(), past.end());
  return order;
}

SchedulePlan Pass::Run() {
  BuildPools();
  for (const PendingJob& job : in_.pending) {
    if (open_pools_ == 0) break;  // every pool waits behind its first job
    Consider(job, false);
  }
  for (auto& [name, pool] : pools_) {
    std::vector<const PendingJob*> later = std::move(pool.backfill);
    if (policy_.backfill_shortest_first) {
      for (uint32_t i : ShortestFirst(pool, later)) {
        if (Full(pool)) break;
        Consider(*later[i], true);
      }
    } else {
      for (const PendingJob* job : later) {
        if (Full(pool)) break;
        Consider(*job, true);
      }
    }
  }
  if (policy_.grow) {
    for (auto& [name, pool] : pools_) Grow(pool);  // what is left is idle
  }
  return std::move(plan_);
}

}  // namespace scheduler_pass

SchedulePlan PlanPass(SchedulerInput input, const SchedulerPolicy& policy) {
  scheduler_pass::Pass pass(input, policy);
  return pass.Run();
}

}  // namespace snn
