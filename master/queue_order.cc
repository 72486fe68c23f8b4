#include "master/queue_order.h"

#include <algorithm>

#include "common/job_validation.h"
#include "master/policy_config.h"

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

void QueueOrder::Charge(const JobTable& jobs, int64_t now_ms) {
  if (charged_to_ms_ == 0) charged_to_ms_ = now_ms;
  for (uint64_t id : jobs.running()) {
    auto it = jobs.jobs().find(id);
    if (it == jobs.jobs().end()) continue;
    const v1::JobRecord& job = it->second;
    const int64_t from = std::max(job.start_ms(), charged_to_ms_);
    if (now_ms <= from) continue;
    const double cores = static_cast<double>(std::max(1u, job.spec().min_replicas())) *
                         CoreRequestOf(job.spec().task().resources()).cores();
    ledger_.Charge(job.tenant(), cores * static_cast<double>(now_ms - from));
  }
  charged_to_ms_ = std::max(charged_to_ms_, now_ms);
  ledger_.AdvanceTo(now_ms);
}

std::vector<const v1::JobRecord*> QueueOrder::Order(
    JobTable& jobs, const std::map<std::string, uint64_t>& pool_cores, int64_t now_ms) {
  Charge(jobs, now_ms);
  const double total_usage = ledger_.total();
  // Shares among the tenants that have work or a configured weight.
  std::map<std::string, double> weight;
  for (const auto& t : config_.tenants()) weight[t.name()] = t.weight();
  double max_queue_weight = 0;
  for (const auto& q : config_.queues()) {
    max_queue_weight = std::max(max_queue_weight, q.weight());
  }
  struct Entry {
    v1::JobRecord* job;
    int64_t wait_ms;
    int32_t tier;
  };
  std::vector<Entry> entries;
  for (const auto& [pool, queue] : jobs.pending()) {
    for (const PendingKey& key : queue) {
      v1::JobRecord* job = jobs.Find(key.job_id);
      if (job == nullptr) continue;
      weight.emplace(job->tenant(), 1.0);
      entries.push_back(Entry{job, now_ms - job->submit_ms(), 0});
    }
  }
  double weight_sum = 0;
  for (const auto& [tenant, w] : weight) weight_sum += w;
  for (Entry& e : entries) {
    v1::JobRecord& job = *e.job;
    const v1::QueueConfig* queue = FindQueue(config_, job.spec().queue());
    e.tier = queue ? queue->priority() : 0;
    PriorityInputs in;
    in.wait_ms = e.wait_ms;
    in.cores = uint64_t{std::max(1u, job.spec().min_replicas())} *
               CoreRequestOf(job.spec().task().resources()).cores();
    auto pc = pool_cores.find(job.spec().pool());
    in.pool_cores = pc == pool_cores.end() ? 1 : std::max<uint64_t>(1, pc->second);
    in.tenant_usage_share = total_usage > 0 ? ledger_.usage(job.tenant()) / total_usage : 0;
    in.tenant_weight_share = weight_sum > 0 ? weight[job.tenant()] / weight_sum : 1;
    // The queue factor is the queue's weight against the largest; tiers order separately.
    in.queue_priority = queue && max_queue_weight > 0
                            ? static_cast<int32_t>(1000 * queue->weight() / max_queue_weight)
                            : 0;
    in.max_queue_priority = 1000;
    in.job_priority = job.spec().priority();
    const PriorityFactors f = ComputePriority(in, weights_);
    auto* out = job.mutable_priority();
    out->set_age(f.age);
    out->set_fairshare(f.fairshare);
    out->set_size(f.size);
    out->set_queue(f.queue);
    out->set_job(f.job);
    out->set_total(f.total);
    out->set_starving(weights_.starve_after_ms > 0 && e.wait_ms > weights_.starve_after_ms);
  }
  std::sort(entries.begin(), entries.end(), [this](const Entry& a, const Entry& b) {
    const bool sa = a.job->priority().starving(), sb = b.job->priority().starving();
    if (sa != sb) return sa;
    if (sa) return a.wait_ms != b.wait_ms ? a.wait_ms > b.wait_ms : a.job->id() < b.job->id();
    if (a.tier != b.tier) return a.tier > b.tier;
    return GoesFirst(a.wait_ms, a.job->priority().total(), a.job->id(), b.wait_ms,
                     b.job->priority().total(), b.job->id(), PriorityWeights{});
  });
  std::vector<const v1::JobRecord*> out;
  out.reserve(entries.size());
  for (const Entry& e : entries) out.push_back(e.job);
  return out;
}

}  // namespace snn
