#include "master/sched/queue_order.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "common/job_validation.h"
#include "master/sched/policy_config.h"

namespace snn {

void QueueOrder::Configure(const v1::SchedulingConfig& config) {
  config_ = config;
  weights_ = ToWeights(config);
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

std::vector<uint32_t> QueueOrder::Order(SchedulerViews& views,
                                        const std::map<std::string, double>& used_core_ms,
                                        const std::map<std::string, uint64_t>& pool_cores,
                                        int64_t now_ms) {
  Charge(used_core_ms, now_ms);
  const double total_usage = ledger_.total();
  const std::span<PendingEntry> pending = views.pending();
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
  // Per tenant, queue and pool, worked out once for the pass, by interned name.
  struct TenantTerms {
    double usage_share = 0, weight_share = 1;
  };
  struct QueueTerms {
    int32_t tier = 0, factor = 0;
  };
  double max_queue_weight = 0;
  for (const auto& q : config_.queues()) max_queue_weight = std::max(max_queue_weight, q.weight());
  std::vector<TenantTerms> tenant_terms(names);
  std::vector<QueueTerms> queue_terms(names);
  for (uint32_t id = 0; id < names; ++id) {
    const std::string& name = views.Name(id);
    if (has_work[id]) {
      tenant_terms[id] = TenantTerms{total_usage > 0 ? ledger_.usage(name) / total_usage : 0,
                                     weight_sum > 0 ? weight.at(name) / weight_sum : 1};
    }
  }
  for (const auto& q : config_.queues()) {
    const QueueTerms terms{
        q.priority(),
        max_queue_weight > 0 ? static_cast<int32_t>(1000 * q.weight() / max_queue_weight) : 0};
    for (uint32_t id = 0; id < names; ++id) {
      if (views.Name(id) == q.name()) queue_terms[id] = terms;
    }
  }
  const std::string* last_pool = nullptr;
  uint64_t cores_in_pool = 1;
  keys_.clear();
  keys_.reserve(pending.size());
  for (uint32_t slot = 0; slot < pending.size(); ++slot) {
    PendingEntry& e = pending[slot];
    const PendingJob& job = e.job;
    if (job.pool != last_pool) {  // interned: one pointer per pool
      last_pool = job.pool;
      auto pc = pool_cores.find(*last_pool);
      cores_in_pool = pc == pool_cores.end() ? 1 : std::max<uint64_t>(1, pc->second);
    }
    const TenantTerms& tenant = tenant_terms[e.tenant];
    const QueueTerms& queue = queue_terms[e.queue];
    PriorityInputs in;
    in.wait_ms = now_ms - job.submit_ms;
    in.cores = uint64_t{job.cores} * job.replicas;
    in.pool_cores = cores_in_pool;
    in.tenant_usage_share = tenant.usage_share;
    in.tenant_weight_share = tenant.weight_share;
    // The queue factor is the queue's weight against the largest; tiers order separately.
    in.queue_priority = queue.factor;
    in.max_queue_priority = 1000;
    in.job_priority = job.job->tier.second;
    e.factors = ComputePriority(in, weights_);
    e.factors.starving = weights_.starve_after_ms > 0 && in.wait_ms > weights_.starve_after_ms;
    keys_.push_back(Key{e.factors.starving, in.wait_ms, queue.tier, e.factors.total, job.id, slot});
  }
  std::sort(keys_.begin(), keys_.end(), [](const Key& a, const Key& b) {
    if (a.starving != b.starving) return a.starving;
    if (a.starving) return a.wait_ms != b.wait_ms ? a.wait_ms > b.wait_ms : a.id < b.id;
    if (a.tier != b.tier) return a.tier > b.tier;
    if (a.total != b.total) return a.total > b.total;
    return a.id < b.id;
  });
  std::vector<uint32_t> out;
  out.reserve(keys_.size());
  for (const Key& k : keys_) out.push_back(k.slot);
  return out;
}

}  // namespace snn
