// Room for a job that cannot start: extra replicas of elastic jobs given back, then
// preemption (of a lower tier, of tenants and queues over their guarantees, of account-tree
// subtrees that borrow); and what the pass's starts and stops do to the quota counters.
#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>

#include "master/sched/scheduler_pass.h"

namespace snn::scheduler_pass {

std::pair<QuotaTreeUse*, int> Pass::TreeNodeOf(const SchedJob& job) {
  if (trees_.empty()) return {nullptr, -1};
  auto t = trees_.find(job.pool);
  if (t == trees_.end()) return {nullptr, -1};
  const int node = t->second.tree().Find(job.tenant);
  return node < 0 ? std::pair<QuotaTreeUse*, int>{nullptr, -1} : std::pair{&t->second, node};
}

void Pass::AddUse(const SchedJob& job, uint64_t cores, int sign) {
  if (!track_use_) return;
  uint64_t& tenant = TenantUse(job);
  uint64_t& queue = QueueUse(job);
  tenant = sign > 0 ? tenant + cores : tenant - std::min(tenant, cores);
  queue = sign > 0 ? queue + cores : queue - std::min(queue, cores);
  if (auto [tree, node] = TreeNodeOf(job); tree != nullptr) tree->Add(node, cores, sign);
}

bool Pass::TreeBlocks(PoolState& pool, const PendingJob& p) {
  const QuotaSlot& slot = SlotOf(p);
  if (slot.tree == nullptr) return false;
  const SchedJob& job = *p.job;
  const uint64_t cores = uint64_t{p.cores} * p.replicas;
  const bool within_share = slot.tree->WithinShare(slot.tree_node, cores);
  if (slot.tree->Available(slot.tree_node) >= cores && !job.interactive) {
    if (within_share) return false;
    // It would borrow: lenders first. Jobs that the pass's starts took out of their share no
    // longer count.
    const auto& waiting = pool.within_share;
    size_t& first = pool.within_share_head;
    while (first < waiting.size() &&
           (pool.left_share.count(waiting[first].id) ||
            !slot.tree->WithinShare(waiting[first].node, waiting[first].cores))) {
      ++first;
    }
    if (first == waiting.size()) return false;
    if (policy_.explain) {
      Wait(job, "it would borrow from the account tree, and job " +
                    std::to_string(waiting[first].id) +
                    ", within its account's share, waits to start first");
    }
    return true;
  }
  if (within_share && job.interactive && slot.tree->Available(slot.tree_node) >= cores) {
    return false;
  }
  TreeWait& seen = tree_waits_[{slot.tree, slot.tree_node, cores, job.interactive, p.shape_width,
                                p.shape_height, p.board_type, p.constraints}];
  const bool same = seen.words != nullptr && seen.version == slot.tree->version();
  if (within_share && policy_.preemption && !pool.units && !pool.reserved &&
      !(same && seen.no_reclaim)) {
    pool.boards.SetWindow(in_.now_ms, in_.now_ms + p.time_limit_ms);
    if (TryReclaim(pool, job, /*for_tree=*/true)) return true;
  }
  if (!same) {
    seen.words = std::make_shared<const std::string>(
        policy_.explain ? slot.tree->Explain(slot.tree_node, cores, job.interactive) : "");
    seen.version = slot.tree->version();
  }
  seen.no_reclaim = true;
  if (policy_.explain) Wait(job, seen.words);
  return true;
}

namespace {

// Victims in the order they are taken: lowest tier, then youngest.
bool TakenAfter(const SchedJob* a, const SchedJob* b) {
  return std::make_tuple(a->tier, -a->start_ms, a->id) >
         std::make_tuple(b->tier, -b->start_ms, b->id);
}

}  // namespace

const SchedJob* Pass::PopVictim(std::vector<const SchedJob*>& heap) {
  if (heap.empty()) return nullptr;
  std::pop_heap(heap.begin(), heap.end(), TakenAfter);
  const SchedJob* next = heap.back();
  heap.pop_back();
  return next;
}

std::vector<const SchedJob*> Pass::PreemptionVictims(PoolState& pool, const SchedJob& job,
                                                     bool for_tree) {
  std::vector<const SchedJob*> victims;
  if (!policy_.preemption) return victims;
  auto stopping_or_young = [&](const SchedJob* r) {
    return (!preempted_.empty() && preempted_.count(r->id)) ||
           in_.now_ms - r->start_ms < policy_.preempt_grace_ms;
  };
  // Within its account's share, it may take back what other subtrees borrowed.
  auto [tree, node] = TreeNodeOf(job);
  const bool tree_reclaim = tree != nullptr && tree->WithinShare(node, job.cores());
  auto guarantee = [&](const auto& quotas, const std::string& who) {
    auto q = quotas.find(NamePair(who, job.pool));
    return q == quotas.end() ? uint64_t{0} : q->second.guaranteed;
  };
  const auto& tq = policy_.tenant_quotas;
  const auto& qq = policy_.queue_quotas;
  const bool tenant_under = track_use_ && TenantUse(job) + job.cores() <= guarantee(tq, job.tenant);
  const bool queue_under = track_use_ && QueueUse(job) + job.cores() <= guarantee(qq, job.queue);
  // Borrowed cores are on loan, whether the job is preemptible or not.
  std::vector<char> lends;  // by node: its jobs may be taken
  bool any_lends = false;
  if (tree_reclaim) {
    lends.resize(tree->tree().nodes().size());
    for (size_t n = 0; n < lends.size(); ++n) {
      lends[n] = static_cast<int>(n) != node && tree->ReclaimableFrom(static_cast<int>(n), node);
      any_lends |= lends[n] != 0;
    }
  }
  if (any_lends) {
    if (pool.reclaimable_nodes.size() != pool.reclaimable.size()) {  // once a pass
      std::unordered_map<std::string_view, int> nodes;
      pool.reclaimable_nodes.clear();
      for (const SchedJob* r : pool.reclaimable) {
        auto [it, added] = nodes.try_emplace(r->tenant, 0);
        if (added) it->second = tree->tree().Find(r->tenant);
        pool.reclaimable_nodes.push_back(it->second);
      }
    }
    for (size_t k = 0; k < pool.reclaimable.size(); ++k) {
      const int victim = pool.reclaimable_nodes[k];
      const SchedJob* r = pool.reclaimable[k];
      if (victim >= 0 && lends[victim] && r->tenant != job.tenant && !stopping_or_young(r)) {
        victims.push_back(r);
      }
    }
  }
  const size_t from_tree = victims.size();
  if (from_tree > 0) std::sort(victims.begin(), victims.end());  // to skip them below
  for (const SchedJob* r : for_tree ? std::span<const SchedJob* const>()
                                    : std::span<const SchedJob* const>(pool.preemptible)) {
    if (stopping_or_young(r) ||
        (from_tree > 0 && std::binary_search(victims.begin(), victims.begin() + from_tree, r))) {
      continue;
    }
    const bool lower_tier = r->tier < job.tier;
    const bool tenant_reclaim = tenant_under && r->tenant != job.tenant &&
                                use_.Tenant(r->tenant, r->pool) > guarantee(tq, r->tenant);
    const bool queue_reclaim = queue_under && r->queue != job.queue &&
                               use_.Queue(r->queue, r->pool) > guarantee(qq, r->queue);
    if (lower_tier || tenant_reclaim || queue_reclaim) victims.push_back(r);
  }
  std::make_heap(victims.begin(), victims.end(), TakenAfter);
  return victims;
}

void Pass::GiveBackExtras(
    const std::vector<std::pair<const SchedJob*, const TaskPlacement*>>& extras, size_t count,
    const SchedJob& for_job) {
  std::map<const SchedJob*, std::vector<uint32_t>> by_job;
  for (size_t k = 0; k < count; ++k) {
    if (preempted_.count(extras[k].first->id)) continue;
    by_job[extras[k].first].push_back(extras[k].second->index);
    giving_back_.insert(extras[k].first->id);
  }
  for (auto& [j, tasks] : by_job) {
    AddUse(*j, tasks.size() * uint64_t{CoreRequestOf(*j->resources).cores()}, -1);
    plan_.shrinks.push_back(
        ShrinkDecision{j->id, std::move(tasks), for_job.id,
                       "extra replica given back for job " + std::to_string(for_job.id)});
  }
}

bool Pass::TryReclaim(PoolState& pool, const SchedJob& job, bool for_tree) {
  // Extra replicas of elastic jobs: lowest tier, youngest job, last grown first.
  std::vector<std::pair<const SchedJob*, const TaskPlacement*>> extras;
  for (const SchedJob* e : pool.elastic) {
    if (for_tree || preempted_.count(e->id)) continue;  // extras do not free a tree's share
    for (const TaskPlacement& t : e->tasks) {
      if (t.extra && !given_back_.count({e->id, t.index})) extras.emplace_back(e, &t);
    }
  }
  std::sort(extras.begin(), extras.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(a.first->tier, -a.first->start_ms, a.first->id,
                           -int64_t{a.second->index}) <
           std::make_tuple(b.first->tier, -b.first->start_ms, b.first->id,
                           -int64_t{b.second->index});
  });
  PoolBoards what_if = pool.boards.Fork();
  for (size_t n = 0; n < extras.size(); ++n) {
    ReleaseTask(what_if, *extras[n].first, *extras[n].second);
    PoolBoards trial = what_if.Fork();
    auto gang = PlaceGang(trial, job, nullptr, nullptr);
    if (!gang) continue;
    GiveBackExtras(extras, n + 1, job);
    for (size_t k = 0; k <= n; ++k)
      given_back_.insert({extras[k].first->id, extras[k].second->index});
    pool.HoldFor(job, in_.now_ms, trial, *gang);
    Wait(job,
         "waiting for elastic jobs to give back " + std::to_string(n + 1) +
             " extra replica(s) to start",
         in_.now_ms);
    return true;
  }
  // Then preemption, on top of every extra replica given back.
  std::vector<const SchedJob*> victims = PreemptionVictims(pool, job, for_tree);
  auto [tree, node] = TreeNodeOf(job);
  std::optional<QuotaTreeUse> tree_if;  // the account tree as the victims stop
  if (tree != nullptr) tree_if = *tree;
  std::vector<const SchedJob*> chosen;
  const uint64_t cores = job.cores();
  // Whether the job is known not to fit on `what_if` as it is (the extras' last try). A
  // victim's release changes only its own boards: unless one of them could now take a task,
  // the job still does not fit, and it is not placed again.
  bool known_not_to_fit = !extras.empty();
  const CoreRequest request = CoreRequestOf(*job.resources);
  auto made_room = [&](const SchedJob& v) {
    for (const TaskPlacement& t : v.tasks) {
      const size_t i = what_if.Find(t.node, t.board);
      if (i != PoolBoards::npos && what_if.CouldTake(i, *job.resources, request)) return true;
    }
    return false;
  };
  while (const SchedJob* v = PopVictim(victims)) {
    const int v_node = tree_if ? tree_if->tree().Find(v->tenant) : -1;
    // For the tree, a subtree's jobs only while it still borrows.
    if (for_tree && !tree_if->ReclaimableFrom(v_node, node)) continue;
    chosen.push_back(v);
    Release(what_if, *v, /*but_extras=*/!extras.empty());
    if (v_node >= 0) tree_if->Add(v_node, v->cores(), -1);
    if (known_not_to_fit && made_room(*v)) known_not_to_fit = false;
    if (known_not_to_fit || (for_tree && tree_if->Available(node) < cores)) continue;
    PoolBoards trial = what_if.Fork();
    auto gang = PlaceGang(trial, job, nullptr, nullptr);
    known_not_to_fit = !gang;
    if (!gang) continue;
    std::string ids;
    for (const SchedJob* c : chosen) {
      preempted_.insert(c->id);
      ids += (ids.empty() ? "" : ", ") + std::to_string(c->id);
      AddUse(*c, c->cores(), -1);
      plan_.preemptions.push_back(
          PreemptDecision{c->id, job.id, "preempted by job " + std::to_string(job.id)});
    }
    GiveBackExtras(extras, extras.size(), job);
    for (const auto& [e, t] : extras) given_back_.insert({e->id, t->index});
    // Its room is held from now on: nothing else may take it while the victims stop; and so
    // is its share of the account tree.
    pool.HoldFor(job, in_.now_ms, trial, *gang);
    if (tree != nullptr) tree->Add(node, cores, 1);
    Wait(job, "preempting job(s) " + ids + " to start", in_.now_ms);
    return true;
  }
  return false;
}

}  // namespace snn::scheduler_pass
