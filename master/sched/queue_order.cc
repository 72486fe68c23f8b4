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

std::vector<const PendingKey*> QueueOrder::Order(const std::map<std::string, PendingQueue>& pending,
                                                 const std::map<std::string, double>& used_core_ms,
                                                 const std::map<std::string, uint64_t>& pool_cores,
                                                 int64_t now_ms) {
  Charge(used_core_ms, now_ms);
  const double total_usage = ledger_.total();
  // Shares among the tenants that have work or a configured weight.
  // Keyed by views of the records' and the config's names, which outlive the pass.
  std::unordered_map<std::string_view, double> weight;
  for (const auto& t : config_.tenants()) weight[t.name()] = t.weight();
  double max_queue_weight = 0;
  for (const auto& q : config_.queues()) {
    max_queue_weight = std::max(max_queue_weight, q.weight());
  }
  struct Entry {  // read from the job's scheduler view: compact, unlike its record
    const PendingKey* key;
    uint64_t id;
    int64_t wait_ms;
    int32_t tier;
    double total = 0;
    bool starving = false;
  };
  std::vector<Entry> entries;
  for (const auto& [pool, queue] : pending) {
    for (const PendingKey& key : queue) {
      weight.emplace(key.summary->job->tenant, 1.0);
      entries.push_back(Entry{&key, key.job_id, now_ms - key.summary->submit_ms, 0});
    }
  }
  double weight_sum = 0;
  for (const auto& [tenant, w] : weight) weight_sum += w;
  // Per tenant and per queue, worked out once for the pass.
  struct TenantTerms {
    double usage_share = 0, weight_share = 1;
  };
  std::unordered_map<std::string_view, TenantTerms> tenants;
  for (const auto& [tenant, w] : weight) {
    tenants[tenant] =
        TenantTerms{total_usage > 0 ? ledger_.usage(std::string(tenant)) / total_usage : 0,
                    weight_sum > 0 ? w / weight_sum : 1};
  }
  struct QueueTerms {
    int32_t tier = 0, factor = 0;
  };
  std::map<std::string, QueueTerms> queues;
  for (const auto& q : config_.queues()) {
    queues[q.name()] = QueueTerms{
        q.priority(),
        max_queue_weight > 0 ? static_cast<int32_t>(1000 * q.weight() / max_queue_weight) : 0};
  }
  const std::string* last_tenant = nullptr;
  const std::string* last_queue = nullptr;
  const TenantTerms* tenant_terms = nullptr;
  const std::string* last_pool = nullptr;
  uint64_t cores_in_pool = 1;
  QueueTerms queue_terms;
  for (Entry& e : entries) {
    const SchedJob& job = *e.key->summary->job;
    if (last_tenant == nullptr || *last_tenant != job.tenant) {
      last_tenant = &job.tenant;
      tenant_terms = &tenants[job.tenant];
    }
    if (last_queue == nullptr || *last_queue != job.queue) {
      last_queue = &job.queue;
      auto q = queues.find(job.queue);
      queue_terms = q == queues.end() ? QueueTerms{} : q->second;
    }
    e.tier = queue_terms.tier;
    PriorityInputs in;
    in.wait_ms = e.wait_ms;
    in.cores = uint64_t{e.key->summary->cores} * e.key->summary->replicas;
    if (last_pool == nullptr || *last_pool != job.pool) {
      last_pool = &job.pool;
      auto pc = pool_cores.find(*last_pool);
      cores_in_pool = pc == pool_cores.end() ? 1 : std::max<uint64_t>(1, pc->second);
    }
    in.pool_cores = cores_in_pool;
    in.tenant_usage_share = tenant_terms->usage_share;
    in.tenant_weight_share = tenant_terms->weight_share;
    // The queue factor is the queue's weight against the largest; tiers order separately.
    in.queue_priority = queue_terms.factor;
    in.max_queue_priority = 1000;
    in.job_priority = job.tier.second;
    PriorityFactors& f = *e.key->factors;
    f = ComputePriority(in, weights_);
    f.starving = weights_.starve_after_ms > 0 && e.wait_ms > weights_.starve_after_ms;
    e.total = f.total;
    e.starving = f.starving;
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.starving != b.starving) return a.starving;
    if (a.starving) return a.wait_ms != b.wait_ms ? a.wait_ms > b.wait_ms : a.id < b.id;
    if (a.tier != b.tier) return a.tier > b.tier;
    if (a.total != b.total) return a.total > b.total;
    return a.id < b.id;
  });
  std::vector<const PendingKey*> out;
  out.reserve(entries.size());
  for (const Entry& e : entries) out.push_back(e.key);
  return out;
}

}  // namespace snn
