#include <algorithm>
#include <set>
#include <tuple>

#include "master/sched/scheduler_pass.h"

namespace snn::scheduler_pass {

void Pass::BuildPools() {
  std::set<std::string> wanted;
  const std::string* last = nullptr;
  for (const PendingJob& j : in_.pending) {
    if (!SameName(j.pool, last)) wanted.insert(*j.pool);
    last = j.pool;
  }
  std::map<std::string, std::vector<BoardCapacity>> boards;
  if (wanted.size() == 1) boards[*wanted.begin()].reserve(in_.boards.size());  // the usual case
  for (BoardCapacity& b : in_.boards) {
    if (!b.grid && b.units == 0) continue;
    if (b.pools.size() == 1) {
      if (wanted.count(b.pools[0])) boards[b.pools[0]].push_back(std::move(b));
      continue;
    }
    for (const std::string& p : b.pools) {
      if (wanted.count(p)) boards[p].push_back(b);
    }
  }
  for (const std::string& p : wanted) AddPool(p, std::move(boards[p]));
  open_pools_ = pools_.size();
  if (pools_.size() == 1 && policy_.backfill) {  // reservations look at when jobs end
    pools_.begin()->second.running.reserve(in_.running.size());
  }
  if (pools_.size() == 1 && policy_.quota_trees != nullptr &&
      policy_.quota_trees->count(pools_.begin()->first)) {
    pools_.begin()->second.reclaimable.reserve(in_.running.size());
  }
  const std::string* last_pool = nullptr;
  PoolState* pool = nullptr;
  bool governed = false;  // by an account tree
  std::map<std::string, std::vector<const SchedJob*>> idle_elastic;
  if (track_use_ && in_.use != nullptr) use_ = *in_.use;
  const bool add_use = track_use_ && in_.use == nullptr;
  for (const RunningJob& r : in_.running) {
    if (add_use) use_.Add(*r.job, r.job->cores(), 1);
    if (!SameName(r.pool, last_pool)) {  // runs of one pool: looked up once
      auto it = pools_.find(*r.pool);
      pool = it == pools_.end() ? nullptr : &it->second;
      governed = policy_.quota_trees != nullptr && policy_.quota_trees->count(*r.pool);
    }
    last_pool = r.pool;
    if (pool == nullptr) {
      if (policy_.grow && r.elastic && r.job->replicas < r.job->max_replicas)
        idle_elastic[*r.pool].push_back(r.job);
      continue;
    }
    if (policy_.backfill) pool->running.emplace_back(std::max(in_.now_ms, r.limit_end_ms), r.job);
    if (r.preemptible) pool->preemptible.push_back(r.job);
    if (governed && !r.job->interactive) pool->reclaimable.push_back(r.job);
    if (r.elastic) pool->elastic.push_back(r.job);
  }
  // Pools where nothing waits but elastic jobs may grow.
  for (auto& [name, jobs] : idle_elastic) {
    std::vector<BoardCapacity> mine;
    for (const BoardCapacity& b : in_.boards) {  // left whole: none is in a wanted pool
      if (b.grid && std::find(b.pools.begin(), b.pools.end(), name) != b.pools.end()) {
        mine.push_back(b);
      }
    }
    AddPool(name, std::move(mine)).elastic = std::move(jobs);
  }
  if (policy_.quota_trees == nullptr) return;
  for (const auto& [name, pool] : pools_) {  // the account trees' use, from the tenants'
    auto tree = policy_.quota_trees->find(name);
    if (tree == policy_.quota_trees->end()) continue;
    QuotaTreeUse& use = trees_.emplace(name, QuotaTreeUse(tree->second)).first->second;
    for (size_t n = 0; n < tree->second.nodes().size(); ++n) {
      use.Add(static_cast<int>(n), use_.Tenant(tree->second.node(n).name, name), 1);
    }
  }
  const std::string* last_name = nullptr;
  PoolState* in = nullptr;
  for (const PendingJob& p : in_.pending) {
    if (p.hold != nullptr) continue;
    if (!SameName(p.pool, last_name)) {
      auto it = pools_.find(*p.pool);
      in = it == pools_.end() ? nullptr : &it->second;
      last_name = p.pool;
    }
    const QuotaSlot& slot = SlotOf(p);
    const uint64_t cores = uint64_t{p.cores} * p.replicas;
    if (in != nullptr && slot.tree != nullptr && slot.tree->WithinShare(slot.tree_node, cores)) {
      in->within_share.push_back({p.id, slot.tree_node, cores});
    }
  }
}

PoolState& Pass::AddPool(const std::string& name, std::vector<BoardCapacity> boards) {
  PoolState& pool = pools_[name];
  if (auto r = in_.reservation_pools.find(name); r != in_.reservation_pools.end()) {
    pool.reservation = &r->second.reservation;
    pool.ends_by_ms = r->second.ends_by_ms;
    for (BoardCapacity& b : boards) {  // open to the reservation's own jobs
      if (!b.closures) continue;
      auto mine = std::make_shared<BoardClosures>();
      for (const BoardClosure& c : *b.closures) {
        if (c.reservation != r->second.reservation) mine->push_back(c);
      }
      b.closures = mine->empty() ? nullptr : std::move(mine);
    }
  }
  for (const BoardCapacity& b : boards) pool.closures |= b.closures != nullptr;
  for (BoardCapacity& b : boards) {
    if (b.units > 0) {  // a class of one-core boards: the pool is counted
      const uint64_t free = std::min(b.units_free, b.units);
      pool.units = PoolState::Units{std::move(b), free, 0, {}};
      return pool;
    }
  }
  pool.boards = PoolBoards(std::move(boards));
  for (size_t i = 0; i < pool.boards.size(); ++i) {
    const auto& b = pool.boards.board(i);
    if (b.pools.size() > 1) shared_[{b.node, b.board}].emplace_back(&pool, i);
  }
  return pool;
}

bool Pass::WithinLimits(const SchedJob& job, uint64_t more) {
  if (!track_use_) return true;
  auto q = policy_.tenant_quotas.find(NamePair(job.tenant, job.pool));
  if (q != policy_.tenant_quotas.end() && TenantUse(job) + more > q->second.limit) return false;
  auto l = policy_.queue_quotas.find(NamePair(job.queue, job.pool));
  if (l != policy_.queue_quotas.end() && QueueUse(job) + more > l->second.limit) return false;
  auto [tree, node] = TreeNodeOf(job);
  return tree == nullptr ||
         (tree->Available(node) >= more && (!job.interactive || tree->WithinShare(node, more)));
}

void Pass::Grow(PoolState& pool) {
  if (pool.units) return;  // one-core boards: not for elastic jobs
  std::vector<const SchedJob*> jobs;
  for (const SchedJob* j : pool.elastic) {
    if (j->replicas < j->max_replicas && !preempted_.count(j->id) && !giving_back_.count(j->id)) {
      jobs.push_back(j);
    }
  }
  if (jobs.empty() || pool.blocked) return;
  std::sort(jobs.begin(), jobs.end(), [](const SchedJob* a, const SchedJob* b) {
    return std::make_tuple(-a->tier.first, -a->tier.second, a->start_ms, a->id) <
           std::make_tuple(-b->tier.first, -b->tier.second, b->start_ms, b->id);
  });
  std::vector<GrowDecision> grows(jobs.size());
  std::vector<char> done(jobs.size(), 0);
  for (bool progress = true; progress;) {  // one replica each per round
    progress = false;
    for (size_t k = 0; k < jobs.size(); ++k) {
      const SchedJob& j = *jobs[k];
      const v1::Resources& r = *j.resources;
      const CoreRequest request = CoreRequestOf(r);
      if (done[k] || j.replicas + grows[k].tasks.size() >= j.max_replicas ||
          !WithinLimits(j, request.cores())) {
        done[k] = 1;
        continue;
      }
      // An extra replica runs until its job ends: it keeps off reserved room.
      pool.boards.SetWindow(in_.now_ms, ExpectedEnd(j, in_.now_ms));
      auto choice = pool.boards.Choose(r, request, pool.reserved ? &pool.holds : nullptr, nullptr);
      if (!choice) {
        done[k] = 1;
        continue;
      }
      pool.boards.Take(choice->index, r, choice->placement.rect);
      Occupy(pool, choice->index, r, choice->placement.rect, pool.reserved,
             ExpectedEnd(j, in_.now_ms));
      const BoardCapacity& b = pool.boards.board(choice->index);
      grows[k].job_id = j.id;
      grows[k].tasks.push_back(TaskPlacement{b.node, b.board, choice->placement.rect, 0, true});
      AddUse(j, request.cores(), 1);
      progress = true;
    }
  }
  for (auto& g : grows) {
    if (!g.tasks.empty()) plan_.grows.push_back(std::move(g));
  }
}

}  // namespace snn::scheduler_pass
