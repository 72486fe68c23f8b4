#include "master/policy_config.h"

#include <yaml-cpp/yaml.h>

#include <map>

#include "common/duration.h"
#include "common/file_util.h"
#include "common/yaml_fields.h"

namespace snn {
namespace {

constexpr int64_t kMaxCores = int64_t{1} << 40;

Result<double> ReadWeight(const YAML::Node& node, const std::string& where) {
  try {
    const double v = node.as<double>();
    if (!(v >= 0) || v > 1e9) return InvalidArgument(where + " must be between 0 and 1e9");
    return v;
  } catch (const YAML::Exception&) {
    return InvalidArgument(where + " must be a number");
  }
}

Result<uint64_t> ReadDuration(const YAML::Node& node, const std::string& where) {
  auto text = ReadString(node, where);
  if (!text.ok()) return text.status();
  auto s = ParseDurationSeconds(*text);
  if (!s.ok()) return InvalidArgument(where + ": " + s.status().message());
  return s;
}

// pools: {POOL: {limit: N, guaranteed: N}} (limit may be called max for queues).
Status ReadPoolCaps(const YAML::Node& node, const std::string& where, const char* limit_name,
                    google::protobuf::RepeatedPtrField<v1::PoolCap>* out) {
  if (!node.IsMap()) return InvalidArgument(where + " must map pool names to capacities");
  for (const auto& kv : node) {
    const std::string pool = kv.first.as<std::string>();
    const std::string at = where + "." + pool;
    SNN_RETURN_IF_ERROR(CheckKnownFields(kv.second, at, {limit_name, "guaranteed"}));
    v1::PoolCap* cap = out->Add();
    cap->set_pool(pool);
    if (kv.second[limit_name]) {
      auto v = ReadWholeNumber(kv.second[limit_name], at + "." + limit_name, 0, kMaxCores);
      if (!v.ok()) return v.status();
      cap->set_limit(static_cast<uint64_t>(*v));
    }
    if (kv.second["guaranteed"]) {
      auto v = ReadWholeNumber(kv.second["guaranteed"], at + ".guaranteed", 0, kMaxCores);
      if (!v.ok()) return v.status();
      cap->set_guaranteed(static_cast<uint64_t>(*v));
    }
  }
  return Status::Ok();
}

Status CheckCaps(const google::protobuf::RepeatedPtrField<v1::PoolCap>& caps,
                 const std::string& who, const std::set<std::string>* known_pools) {
  std::set<std::string> seen;
  for (const auto& c : caps) {
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

}  // namespace

v1::SchedulingConfig DefaultSchedulingConfig() {
  v1::SchedulingConfig c;
  c.set_backfill("easy");
  c.set_backfill_order("shortest_first");
  c.set_backfill_age_first_after_s(14 * 3600);
  c.set_preemption(true);
  c.set_preempt_grace_s(300);
  auto* p = c.mutable_priority();
  p->set_age_weight(1000);
  p->set_fairshare_weight(1000);
  p->set_size_weight(0);
  p->set_queue_weight(1000);
  p->set_job_weight(1000);
  p->set_max_age_s(2 * 86400);
  p->set_fairshare_half_life_s(7 * 86400);
  p->set_starve_after_s(5 * 3600);
  auto* q = c.add_queues();
  q->set_name("default");
  q->set_weight(1);
  return c;
}

Result<v1::SchedulingConfig> ParsePolicyYaml(const std::string& text) {
  v1::SchedulingConfig c = DefaultSchedulingConfig();
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return InvalidArgument("the policy file must be a map");
    SNN_RETURN_IF_ERROR(
        CheckKnownFields(root, "the policy file", {"scheduler", "priority", "queues", "tenants"}));
    if (const YAML::Node s = root["scheduler"]) {
      SNN_RETURN_IF_ERROR(
          CheckKnownFields(s, "scheduler",
                           {"backfill", "backfill_order", "backfill_age_first_after", "preemption",
                            "preempt_grace"}));
      if (s["backfill"]) c.set_backfill(s["backfill"].as<std::string>());
      if (s["backfill_order"]) c.set_backfill_order(s["backfill_order"].as<std::string>());
      if (s["preemption"]) c.set_preemption(s["preemption"].as<bool>());
      if (s["backfill_age_first_after"]) {
        auto a = ReadDuration(s["backfill_age_first_after"], "scheduler.backfill_age_first_after");
        if (!a.ok()) return a.status();
        c.set_backfill_age_first_after_s(*a);
      }
      if (s["preempt_grace"]) {
        auto g = ReadDuration(s["preempt_grace"], "scheduler.preempt_grace");
        if (!g.ok()) return g.status();
        c.set_preempt_grace_s(*g);
      }
    }
    if (const YAML::Node p = root["priority"]) {
      SNN_RETURN_IF_ERROR(CheckKnownFields(
          p, "priority",
          {"weights", "max_age", "fairshare_half_life", "starve_after", "favor_small"}));
      auto* out = c.mutable_priority();
      if (const YAML::Node w = p["weights"]) {
        SNN_RETURN_IF_ERROR(
            CheckKnownFields(w, "priority.weights", {"age", "fairshare", "size", "queue", "job"}));
        const std::map<std::string, void (v1::PriorityConfig::*)(double)> setters = {
            {"age", &v1::PriorityConfig::set_age_weight},
            {"fairshare", &v1::PriorityConfig::set_fairshare_weight},
            {"size", &v1::PriorityConfig::set_size_weight},
            {"queue", &v1::PriorityConfig::set_queue_weight},
            {"job", &v1::PriorityConfig::set_job_weight}};
        for (const auto& [name, set] : setters) {
          if (!w[name]) continue;
          auto v = ReadWeight(w[name], "priority.weights." + name);
          if (!v.ok()) return v.status();
          (out->*set)(*v);
        }
      }
      const std::map<std::string, void (v1::PriorityConfig::*)(uint64_t)> durations = {
          {"max_age", &v1::PriorityConfig::set_max_age_s},
          {"fairshare_half_life", &v1::PriorityConfig::set_fairshare_half_life_s},
          {"starve_after", &v1::PriorityConfig::set_starve_after_s}};
      for (const auto& [name, set] : durations) {
        if (!p[name]) continue;
        auto v = ReadDuration(p[name], "priority." + name);
        if (!v.ok()) return v.status();
        (out->*set)(*v);
      }
      if (p["favor_small"]) out->set_favor_small(p["favor_small"].as<bool>());
    }
    if (const YAML::Node queues = root["queues"]) {
      if (!queues.IsSequence()) return InvalidArgument("queues must be a list");
      c.clear_queues();
      for (size_t i = 0; i < queues.size(); ++i) {
        const YAML::Node q = queues[i];
        const std::string where = "queues[" + std::to_string(i) + "]";
        SNN_RETURN_IF_ERROR(CheckKnownFields(q, where, {"name", "priority", "weight", "pools"}));
        auto* out = c.add_queues();
        auto name = ReadString(q["name"], where + ".name");
        if (!name.ok()) return name.status();
        out->set_name(*name);
        if (q["priority"]) {
          auto v = ReadWholeNumber(q["priority"], where + ".priority", -1000000, 1000000);
          if (!v.ok()) return v.status();
          out->set_priority(static_cast<int32_t>(*v));
        }
        out->set_weight(1);
        if (q["weight"]) {
          auto v = ReadWeight(q["weight"], where + ".weight");
          if (!v.ok()) return v.status();
          out->set_weight(*v);
        }
        if (q["pools"])
          SNN_RETURN_IF_ERROR(
              ReadPoolCaps(q["pools"], where + ".pools", "max", out->mutable_pools()));
      }
    }
    if (const YAML::Node tenants = root["tenants"]) {
      if (!tenants.IsSequence()) return InvalidArgument("tenants must be a list");
      for (size_t i = 0; i < tenants.size(); ++i) {
        const YAML::Node t = tenants[i];
        const std::string where = "tenants[" + std::to_string(i) + "]";
        SNN_RETURN_IF_ERROR(CheckKnownFields(t, where, {"name", "weight", "quotas"}));
        auto* out = c.add_tenants();
        auto name = ReadString(t["name"], where + ".name");
        if (!name.ok()) return name.status();
        out->set_name(*name);
        out->set_weight(1);
        if (t["weight"]) {
          auto v = ReadWeight(t["weight"], where + ".weight");
          if (!v.ok()) return v.status();
          out->set_weight(*v);
        }
        if (t["quotas"])
          SNN_RETURN_IF_ERROR(
              ReadPoolCaps(t["quotas"], where + ".quotas", "limit", out->mutable_quotas()));
      }
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument("the policy file is not valid: " + std::string(e.what()));
  }
  SNN_RETURN_IF_ERROR(ValidatePolicy(c));
  return c;
}

Result<v1::SchedulingConfig> LoadPolicyFile(const std::string& path) {
  auto text = ReadWholeFile(path, "the policy file");
  if (!text.ok()) return text.status();
  auto c = ParsePolicyYaml(*text);
  if (!c.ok()) return Status(c.status().code(), path + ": " + c.status().message());
  return c;
}

Status ValidatePolicy(const v1::SchedulingConfig& c) {
  if (c.backfill() != "easy" && c.backfill() != "fcfs") {
    return InvalidArgument("scheduler.backfill is '" + c.backfill() + "'; use easy or fcfs");
  }
  if (c.backfill_order() != "shortest_first" && c.backfill_order() != "queue") {
    return InvalidArgument("scheduler.backfill_order is '" + c.backfill_order() +
                           "'; use shortest_first or queue");
  }
  if (c.queues_size() == 0) return InvalidArgument("the policy has no queue");
  std::set<std::string> names;
  for (const auto& q : c.queues()) {
    if (q.name().empty()) return InvalidArgument("a queue has no name");
    if (!names.insert(q.name()).second)
      return InvalidArgument("queue '" + q.name() + "' appears twice");
    if (!(q.weight() >= 0))
      return InvalidArgument("queue '" + q.name() + "': weight must not be negative");
    SNN_RETURN_IF_ERROR(CheckCaps(q.pools(), "queue '" + q.name() + "'", nullptr));
  }
  names.clear();
  for (const auto& t : c.tenants()) {
    if (t.name().empty()) return InvalidArgument("a tenant has no name");
    if (!names.insert(t.name()).second)
      return InvalidArgument("tenant '" + t.name() + "' appears twice");
    if (!(t.weight() >= 0))
      return InvalidArgument("tenant '" + t.name() + "': weight must not be negative");
    SNN_RETURN_IF_ERROR(CheckCaps(t.quotas(), "tenant '" + t.name() + "'", nullptr));
  }
  const auto& p = c.priority();
  for (double w :
       {p.age_weight(), p.fairshare_weight(), p.size_weight(), p.queue_weight(), p.job_weight()}) {
    if (!(w >= 0)) return InvalidArgument("priority weights must not be negative");
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
  SNN_RETURN_IF_ERROR(CheckCaps(change.pools(), "queue '" + change.name() + "'", &known_pools));
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
  q->set_priority(change.priority());
  q->set_weight(change.weight());
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
  }
  t->set_weight(change.weight());
  MergeCaps(t->mutable_quotas(), change.quotas());
  SNN_RETURN_IF_ERROR(ValidatePolicy(next));
  return next;
}

SchedulerPolicy ToSchedulerPolicy(const v1::SchedulingConfig& c) {
  SchedulerPolicy p;
  p.backfill = c.backfill() == "easy";
  p.backfill_shortest_first = c.backfill_order() == "shortest_first";
  p.backfill_age_first_after_ms = static_cast<int64_t>(c.backfill_age_first_after_s()) * 1000;
  p.preemption = c.preemption();
  p.preempt_grace_ms = static_cast<int64_t>(c.preempt_grace_s()) * 1000;
  for (const auto& t : c.tenants()) {
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
  w.max_age_ms = static_cast<int64_t>(p.max_age_s()) * 1000;
  w.favor_small = p.favor_small();
  w.starve_after_ms = static_cast<int64_t>(p.starve_after_s()) * 1000;
  return w;
}

}  // namespace snn
