#include "master/sched/policy_config.h"

#include <cctype>
#include <map>

#include "master/sched/quota_tree.h"

namespace snn {
namespace {

// Bounds that keep every priority sum finite and every listing small; far above any real site.
constexpr double kMaxWeight = 1e9;
constexpr int kMaxQueues = 256;
constexpr int kMaxTenants = 100000;
constexpr size_t kMaxNameBytes = 64;

Status CheckWeight(double w, const std::string& what) {
  if (!(w >= 0 && w <= kMaxWeight)) {  // NaN and infinity fail too
    return InvalidArgument(what + " must be between 0 and 1e9");
  }
  return Status::Ok();
}

Status CheckName(const std::string& name, const char* kind) {
  if (name.empty()) return InvalidArgument(std::string("a ") + kind + " has no name");
  if (name.size() > kMaxNameBytes) {
    return InvalidArgument(std::string(kind) + " names are at most 64 bytes");
  }
  for (char c : name) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return InvalidArgument(std::string(kind) + " '" + name.substr(0, 64) +
                             "': names use only letters, digits, '-', '_' and '.'");
    }
  }
  return Status::Ok();
}

Status CheckCaps(const google::protobuf::RepeatedPtrField<v1::PoolCap>& caps,
                 const std::string& who, const std::set<std::string>* known_pools,
                 bool tenant = true) {
  std::set<std::string> seen;
  for (const auto& c : caps) {
    if (!tenant && (c.has_nominal() || c.has_borrowing_limit() || c.has_lending_limit())) {
      return InvalidArgument(who +
                             ": nominal, borrowing_limit and lending_limit are for tenants "
                             "(the account tree), not queues");
    }
    if (c.pool().empty()) return InvalidArgument(who + ": a capacity names no pool");
    if (!seen.insert(c.pool()).second) {
      return InvalidArgument(who + ": pool '" + c.pool() + "' appears twice");
    }
    if (known_pools && !known_pools->count(c.pool())) {
      std::string known;
      for (const auto& p : *known_pools) known += (known.empty() ? "" : ", ") + p;
      return InvalidArgument(who + ": unknown pool '" + c.pool() + "' (known: " + known + ")");
    }
    if (c.has_limit() && c.guaranteed() > c.limit()) {
      return InvalidArgument(who + " in pool '" + c.pool() + "': guaranteed " +
                             std::to_string(c.guaranteed()) + " is above the limit " +
                             std::to_string(c.limit()));
    }
  }
  return Status::Ok();
}

void MergeCaps(google::protobuf::RepeatedPtrField<v1::PoolCap>* into,
               const google::protobuf::RepeatedPtrField<v1::PoolCap>& changes) {
  for (const auto& change : changes) {
    v1::PoolCap* existing = nullptr;
    for (auto& c : *into) {
      if (c.pool() == change.pool()) existing = &c;
    }
    if (existing == nullptr) existing = into->Add();
    *existing = change;
  }
}
// As Slurm's max_batch_requeue.
constexpr uint32_t kDefaultMaxLostRequeues = 5;

}  // namespace

uint32_t MaxLostRequeues(const v1::SchedulingConfig& c) {
  return c.has_max_lost_requeues() ? c.max_lost_requeues() : kDefaultMaxLostRequeues;
}

v1::SchedulingConfig DefaultSchedulingConfig() {
  v1::SchedulingConfig c;
  c.set_backfill("easy");
  c.set_backfill_order("shortest_first");
  c.set_backfill_age_first_after_s(14 * 3600);
  c.set_preemption(true);
  c.set_preempt_grace_s(300);
  c.set_max_lost_requeues(kDefaultMaxLostRequeues);
  auto* p = c.mutable_priority();
  p->set_age_weight(1000);
  p->set_fairshare_weight(1000);
  p->set_size_weight(0);
  p->set_queue_weight(1000);
  p->set_job_weight(1000);
  p->set_slowdown_weight(1000);
  p->set_max_age_s(4 * 86400);
  p->set_fairshare_half_life_s(7 * 86400);
  p->set_starve_after_s(5 * 3600);
  auto* q = c.add_queues();
  q->set_name("default");
  q->set_weight(1);
  return c;
}
namespace {

// A core-hour limit needs its window; both finite.
Status CheckCoreHours(const v1::UsageLimits& l, const std::string& where) {
  if (!(l.max_core_hours() >= 0) || l.max_core_hours() > 1e12) {
    return InvalidArgument(where + ".max_core_hours must be from 0 to 1e12 core-hours");
  }
  if (l.max_core_hours() > 0 && (l.window_s() < 60 || l.window_s() > 366 * 86400)) {
    return InvalidArgument(where + ".window must be from 1m to 366d");
  }
  return Status::Ok();
}

}  // namespace

Status ValidatePolicy(const v1::SchedulingConfig& c) {
  SNN_RETURN_IF_ERROR(CheckCoreHours(c.user_limits(), "limits.per_user"));
  if (c.backfill() != "easy" && c.backfill() != "fcfs") {
    return InvalidArgument("scheduler.backfill is '" + c.backfill() + "'; use easy or fcfs");
  }
  if (c.backfill_order() != "shortest_first" && c.backfill_order() != "queue") {
    return InvalidArgument("scheduler.backfill_order is '" + c.backfill_order() +
                           "'; use shortest_first or queue");
  }
  if (c.queues_size() == 0) return InvalidArgument("the policy has no queue");
  if (c.queues_size() > kMaxQueues) {
    return InvalidArgument("the policy has " + std::to_string(c.queues_size()) +
                           " queues; at most " + std::to_string(kMaxQueues));
  }
  if (c.tenants_size() > kMaxTenants) {
    return InvalidArgument("the policy has " + std::to_string(c.tenants_size()) +
                           " tenants; at most " + std::to_string(kMaxTenants));
  }
  std::set<std::string> names;
  for (const auto& q : c.queues()) {
    SNN_RETURN_IF_ERROR(CheckName(q.name(), "queue"));
    if (!names.insert(q.name()).second)
      return InvalidArgument("queue '" + q.name() + "' appears twice");
    SNN_RETURN_IF_ERROR(CheckWeight(q.weight(), "queue '" + q.name() + "': weight"));
    if (q.priority() < -1000000 || q.priority() > 1000000) {
      return InvalidArgument("queue '" + q.name() +
                             "': priority must be between -1000000 and 1000000");
    }
    SNN_RETURN_IF_ERROR(CheckCaps(q.pools(), "queue '" + q.name() + "'", nullptr, false));
  }
  names.clear();
  for (const auto& t : c.tenants()) {
    SNN_RETURN_IF_ERROR(CheckName(t.name(), "tenant"));
    if (!names.insert(t.name()).second)
      return InvalidArgument("tenant '" + t.name() + "' appears twice");
    SNN_RETURN_IF_ERROR(CheckWeight(t.weight(), "tenant '" + t.name() + "': weight"));
    SNN_RETURN_IF_ERROR(CheckCaps(t.quotas(), "tenant '" + t.name() + "'", nullptr));
    SNN_RETURN_IF_ERROR(CheckCoreHours(t.limits(), "tenant '" + t.name() + "': limits"));
  }
  SNN_RETURN_IF_ERROR(CheckAccountTree(c));
  if (c.licenses_size() > static_cast<int>(kMaxLicenses)) {
    return InvalidArgument("the policy has more than " + std::to_string(kMaxLicenses) +
                           " licenses");
  }
  for (const auto& [name, count] : c.licenses()) {
    SNN_RETURN_IF_ERROR(CheckName(name, "license"));
    if (count < 1 || count > 1'000'000) {
      return InvalidArgument("license '" + name + "': a count from 1 to 1000000");
    }
  }
  const auto& p = c.priority();
  for (double w : {p.age_weight(), p.fairshare_weight(), p.size_weight(), p.queue_weight(),
                   p.job_weight(), p.slowdown_weight()}) {
    SNN_RETURN_IF_ERROR(CheckWeight(w, "priority weights"));
  }
  return Status::Ok();
}

const v1::QueueConfig* FindQueue(const v1::SchedulingConfig& c, const std::string& name) {
  for (const auto& q : c.queues()) {
    if (q.name() == name) return &q;
  }
  return nullptr;
}

const v1::TenantConfig* FindTenant(const v1::SchedulingConfig& c, const std::string& name) {
  for (const auto& t : c.tenants()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

Result<v1::SchedulingConfig> SetQueue(const v1::SchedulingConfig& current,
                                      const v1::QueueConfig& change, bool create,
                                      const std::set<std::string>& known_pools) {
  SNN_RETURN_IF_ERROR(
      CheckCaps(change.pools(), "queue '" + change.name() + "'", &known_pools, false));
  v1::SchedulingConfig next = current;
  v1::QueueConfig* q = nullptr;
  for (auto& existing : *next.mutable_queues()) {
    if (existing.name() == change.name()) q = &existing;
  }
  if (q == nullptr) {
    if (!create) {
      std::string known;
      for (const auto& e : current.queues()) known += (known.empty() ? "" : ", ") + e.name();
      return NotFound("unknown queue '" + change.name() + "' (known: " + known +
                      "); add it with --create");
    }
    q = next.add_queues();
    q->set_name(change.name());
    q->set_weight(1);
  }
  if (change.has_priority()) q->set_priority(change.priority());
  if (change.has_weight()) q->set_weight(change.weight());
  MergeCaps(q->mutable_pools(), change.pools());
  SNN_RETURN_IF_ERROR(ValidatePolicy(next));
  return next;
}

Result<v1::SchedulingConfig> SetTenant(const v1::SchedulingConfig& current,
                                       const v1::TenantConfig& change, bool create,
                                       const std::set<std::string>& known_pools) {
  SNN_RETURN_IF_ERROR(CheckCaps(change.quotas(), "tenant '" + change.name() + "'", &known_pools));
  v1::SchedulingConfig next = current;
  v1::TenantConfig* t = nullptr;
  for (auto& existing : *next.mutable_tenants()) {
    if (existing.name() == change.name()) t = &existing;
  }
  if (t == nullptr) {
    if (!create) {
      std::string known;
      for (const auto& e : current.tenants()) known += (known.empty() ? "" : ", ") + e.name();
      return NotFound("unknown tenant '" + change.name() +
                      "' (known: " + (known.empty() ? "none" : known) + "); add it with --create");
    }
    t = next.add_tenants();
    t->set_name(change.name());
    t->set_weight(1);
  }
  if (change.has_weight()) t->set_weight(change.weight());
  if (change.has_parent()) t->set_parent(change.parent());
  MergeCaps(t->mutable_quotas(), change.quotas());
  SNN_RETURN_IF_ERROR(ValidatePolicy(next));
  return next;
}

SchedulerPolicy ToSchedulerPolicy(const v1::SchedulingConfig& c) {
  SchedulerPolicy p;
  p.backfill = c.backfill() == "easy";
  p.backfill_shortest_first = c.backfill_order() == "shortest_first";
  p.backfill_past_reservation_by_priority = p.backfill_shortest_first;
  p.backfill_age_first_after_ms = static_cast<int64_t>(c.backfill_age_first_after_s()) * 1000;
  p.preemption = c.preemption();
  p.preempt_grace_ms = static_cast<int64_t>(c.preempt_grace_s()) * 1000;
  p.user_max_running = c.user_limits().max_running();
  auto core_hours = [](const v1::UsageLimits& l) {
    return CoreHourLimit{l.max_core_hours() * 3'600'000.0,
                         static_cast<int64_t>(l.window_s()) * 1000};
  };
  p.user_core_hours = core_hours(c.user_limits());
  p.licenses.insert(c.licenses().begin(), c.licenses().end());
  p.quota_trees = BuildQuotaTrees(c);
  for (const auto& t : c.tenants()) {
    if (t.limits().max_running() > 0) p.tenant_max_running[t.name()] = t.limits().max_running();
    if (t.limits().max_core_hours() > 0) p.tenant_core_hours[t.name()] = core_hours(t.limits());
    for (const auto& cap : t.quotas()) {
      Quota q;
      if (cap.has_limit()) q.limit = cap.limit();
      q.guaranteed = cap.guaranteed();
      p.tenant_quotas[{t.name(), cap.pool()}] = q;
    }
  }
  for (const auto& queue : c.queues()) {
    for (const auto& cap : queue.pools()) {
      Quota q;
      if (cap.has_limit()) q.limit = cap.limit();
      q.guaranteed = cap.guaranteed();
      p.queue_quotas[{queue.name(), cap.pool()}] = q;
    }
  }
  return p;
}

PriorityWeights ToWeights(const v1::SchedulingConfig& c) {
  const auto& p = c.priority();
  PriorityWeights w;
  w.age = p.age_weight();
  w.fairshare = p.fairshare_weight();
  w.size = p.size_weight();
  w.queue = p.queue_weight();
  w.job = p.job_weight();
  w.slowdown = p.slowdown_weight();
  w.max_age_ms = static_cast<int64_t>(p.max_age_s()) * 1000;
  w.favor_small = p.favor_small();
  w.starve_after_ms = static_cast<int64_t>(p.starve_after_s()) * 1000;
  return w;
}

}  // namespace snn