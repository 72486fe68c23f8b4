#include "master/sched/queue_order.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "common/base/job_validation.h"
#include "master/sched/fair_tree.h"
#include "master/sched/policy_config.h"

namespace snn {

void QueueOrder::Configure(const v1::SchedulingConfig& config) {
  config_ = config;
  weights_ = ToWeights(config);
  has_tree_ = false;
  for (const auto& t : config.tenants()) has_tree_ = has_tree_ || !t.parent().empty();
  accrual_.set_per_tenant(config.priority().accrue_per_tenant());
  const int64_t half_life = static_cast<int64_t>(config.priority().fairshare_half_life_s()) * 1000;
  if (half_life != ledger_.half_life_ms()) {
    FairShareLedger fresh(half_life);
    for (const auto& [tenant, u] : ledger_.all()) fresh.Charge(tenant, u);
    ledger_ = fresh;
  }
}

void QueueOrder::Charge(const std::map<std::string, double>& used_core_ms, int64_t now_ms) {
  for (const auto& [tenant, core_ms] : used_core_ms) ledger_.Charge(tenant, core_ms);
  ledger_.AdvanceTo(now_ms);
}

bool QueueOrder::KeyLess::operator()(const Key& a, const Key& b) const {
  if (a.starving != b.starving) return a.starving;
  if (a.starving) return a.wait_ms != b.wait_ms ? a.wait_ms > b.wait_ms : a.id < b.id;
  if (a.tier != b.tier) return a.tier > b.tier;
  if (a.total != b.total) return a.total > b.total;
  return a.id < b.id;
}

void QueueOrder::PrepareTerms(const SchedulerViews& views,
                              const std::map<std::string, uint64_t>& pool_cores) {
  const double total_usage = ledger_.total();
  const std::span<const PendingEntry> pending = views.pending();
  const size_t names = views.name_count();
  // Shares among the tenants that have work or a configured weight.
  std::unordered_map<std::string_view, double> weight;
  for (const auto& t : config_.tenants()) weight[t.name()] = t.weight();
  std::vector<char> has_work(names, 0);
  for (const PendingEntry& e : pending) has_work[e.tenant] = 1;
  for (uint32_t id = 0; id < names; ++id) {
    if (has_work[id]) weight.emplace(views.Name(id), 1.0);
  }
  double weight_sum = 0;
  for (const auto& [tenant, w] : weight) weight_sum += w;
  double max_queue_weight = 0;
  for (const auto& q : config_.queues()) max_queue_weight = std::max(max_queue_weight, q.weight());
  tenant_terms_.assign(names, TenantTerms{});
  queue_terms_.assign(names, QueueTerms{});
  for (uint32_t id = 0; id < names; ++id) {
    const std::string& name = views.Name(id);
    if (has_work[id]) {
      tenant_terms_[id] = TenantTerms{total_usage > 0 ? ledger_.usage(name) / total_usage : 0,
                                      weight_sum > 0 ? weight.at(name) / weight_sum : 1};
    }
  }
  if (has_tree_) {  // shares and usage down the account tree instead
    std::vector<std::string_view> working;
    for (uint32_t id = 0; id < names; ++id) {
      if (has_work[id]) working.push_back(views.Name(id));
    }
    const auto terms = FairShareDownTheTree(
        config_, working, [&](const std::string& t) { return ledger_.usage(t); }, total_usage);
    for (uint32_t id = 0; id < names; ++id) {
      if (!has_work[id]) continue;
      const ShareTerms& t = terms.find(views.Name(id))->second;
      tenant_terms_[id] = TenantTerms{t.usage_share, t.weight_share};
    }
  }
  // A tenant that comes with its first job before the next full order: no usage, one share.
  new_tenant_terms_ = TenantTerms{0, 1.0 / (weight_sum + 1)};
  for (const auto& q : config_.queues()) {
    const QueueTerms terms{
        q.priority(),
        max_queue_weight > 0 ? static_cast<int32_t>(1000 * q.weight() / max_queue_weight) : 0};
    for (uint32_t id = 0; id < names; ++id) {
      if (views.Name(id) == q.name()) queue_terms_[id] = terms;
    }
  }
  pool_cores_ = pool_cores;
  last_pool_ = nullptr;
}

QueueOrder::Key QueueOrder::KeyOf(PendingEntry& e, int64_t now_ms) {
  const PendingJob& job = e.job;
  if (job.pool != last_pool_) {  // interned, and pools come in runs: one lookup per run
    last_pool_ = job.pool;
    auto pc = pool_cores_.find(*job.pool);
    cores_in_pool_ = pc == pool_cores_.end() ? 1 : std::max<uint64_t>(1, pc->second);
  }
  const TenantTerms& tenant =
      e.tenant < tenant_terms_.size() ? tenant_terms_[e.tenant] : new_tenant_terms_;
  static const QueueTerms kNoQueue;
  const QueueTerms& queue = e.queue < queue_terms_.size() ? queue_terms_[e.queue] : kNoQueue;
  PriorityInputs in;
  in.wait_ms = accrual_.CountedWait(job.id, job.submit_ms, now_ms);
  in.cores = uint64_t{job.cores} * job.replicas;
  in.pool_cores = cores_in_pool_;
  in.tenant_usage_share = tenant.usage_share;
  in.tenant_weight_share = tenant.weight_share;
  // The queue factor is the queue's weight against the largest; tiers order separately.
  in.queue_priority = queue.factor;
  in.max_queue_priority = 1000;
  in.job_priority = job.job->tier.second;
  // The slowdown a job would see if it started now, on how long it is expected to run.
  in.time_limit_ms = job.predicted_ms > 0 ? job.predicted_ms : job.time_limit_ms;
  e.factors = ComputePriority(in, weights_);
  e.factors.starving = weights_.starve_after_ms > 0 && in.wait_ms > weights_.starve_after_ms;
  e.job.priority = e.factors.total;
  e.job.tier = queue.tier;
  e.job.starving = e.factors.starving;
  return Key{e.factors.starving, in.wait_ms, queue.tier, e.factors.total, job.id};
}

std::vector<uint32_t> QueueOrder::Order(SchedulerViews& views,
                                        const std::map<std::string, double>& used_core_ms,
                                        const std::map<std::string, uint64_t>& pool_cores,
                                        int64_t now_ms) {
  Charge(used_core_ms, now_ms);
  PrepareTerms(views, pool_cores);
  const std::span<PendingEntry> pending = views.pending();
  if (accrual_.on()) {
    std::vector<AccrualLimit::PendingJob> jobs;
    jobs.reserve(pending.size());
    for (const PendingEntry& e : pending) jobs.push_back({e.tenant, e.job.submit_ms, e.job.id});
    accrual_.Update(jobs, now_ms);
  }
  views.TakeChanged();  // every one is ranked below
  changed_.clear();
  changed_order_.clear();
  ranked_ms_ = now_ms;
  ranked_valid_ = true;
  ranked_head_ = 0;
  struct Ranked {
    Key key;
    uint32_t slot;
  };
  std::vector<Ranked> keys;
  keys.reserve(pending.size());
  for (uint32_t slot = 0; slot < pending.size(); ++slot) {
    keys.push_back(Ranked{KeyOf(pending[slot], now_ms), slot});
  }
  std::sort(keys.begin(), keys.end(),
            [](const Ranked& a, const Ranked& b) { return KeyLess()(a.key, b.key); });
  std::vector<uint32_t> out;
  out.reserve(keys.size());
  ranked_.clear();
  ranked_.reserve(keys.size());
  for (const Ranked& k : keys) {
    out.push_back(k.slot);
    ranked_.push_back(k.key);
  }
  return out;
}

std::vector<uint32_t> QueueOrder::OrderHead(SchedulerViews& views, size_t depth) {
  std::vector<uint32_t> out;
  if (!ranked_valid_) return out;
  for (uint64_t id : views.TakeChanged()) {
    const size_t slot = views.PendingSlotOf(id);
    if (auto it = changed_.find(id); it != changed_.end()) {
      changed_order_.erase(it->second);
      changed_.erase(it);
    }
    if (slot == SIZE_MAX) continue;  // pending for a while only
    const Key key = KeyOf(views.pending()[slot], ranked_ms_);
    changed_.emplace(id, key);
    changed_order_.insert(key);
  }
  // Merge the two orders, leaving out who is no longer pending and the full order's stale
  // place of a job that changed since.
  out.reserve(std::min(depth, ranked_.size() + changed_order_.size()));
  // A job that left the queue at its head is passed over once for all: if it comes back, it
  // comes as a changed job.
  while (ranked_head_ < ranked_.size() &&
         views.PendingSlotOf(ranked_[ranked_head_].id) == SIZE_MAX) {
    ++ranked_head_;
  }
  auto r = ranked_.begin() + static_cast<ptrdiff_t>(ranked_head_);
  auto c = changed_order_.begin();
  const KeyLess less;
  while (out.size() < depth && (r != ranked_.end() || c != changed_order_.end())) {
    if (r == ranked_.end() || (c != changed_order_.end() && less(*c, *r))) {
      const size_t slot = views.PendingSlotOf(c->id);
      if (slot == SIZE_MAX) {  // left the queue since
        changed_.erase(c->id);
        c = changed_order_.erase(c);
        continue;
      }
      out.push_back(static_cast<uint32_t>(slot));
      ++c;
      continue;
    }
    const uint64_t id = (r++)->id;
    if (changed_.count(id)) continue;  // its place is the changed one
    const size_t slot = views.PendingSlotOf(id);
    if (slot != SIZE_MAX) out.push_back(static_cast<uint32_t>(slot));
  }
  return out;
}

}  // namespace snn
