#include "master/policy/policy_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "common/base/duration.h"
#include "common/base/file_util.h"
#include "common/daemon/yaml_fields.h"
#include "master/sched/policy_config.h"

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

// {max_submitted: N, max_running: N, max_time_limit: DURATION, max_core_hours: X,
//  window: DURATION}
Status ReadUsageLimits(const YAML::Node& node, const std::string& where, v1::UsageLimits* out) {
  SNN_RETURN_IF_ERROR(CheckKnownFields(
      node, where, {"max_submitted", "max_running", "max_time_limit", "max_core_hours", "window"}));
  for (const char* key : {"max_submitted", "max_running"}) {
    if (!node[key]) continue;
    try {
      const int64_t n = node[key].as<int64_t>();
      if (n < 1 || n > 100'000'000) throw YAML::Exception(YAML::Mark(), "");
      (std::string(key) == "max_running" ? out->set_max_running(static_cast<uint32_t>(n))
                                         : out->set_max_submitted(static_cast<uint32_t>(n)));
    } catch (const YAML::Exception&) {
      return InvalidArgument(where + "." + key + " must be a number of jobs from 1 to 100000000");
    }
  }
  if (node["max_time_limit"]) {
    auto d = ReadDuration(node["max_time_limit"], where + ".max_time_limit");
    if (!d.ok()) return d.status();
    if (*d == 0) return InvalidArgument(where + ".max_time_limit must be longer than 0");
    out->set_max_time_limit_s(*d);
  }
  if (node["max_core_hours"]) {
    double hours = 0;
    try {
      hours = node["max_core_hours"].as<double>();
    } catch (const YAML::Exception&) {
      hours = -1;
    }
    if (!(hours > 0) || hours > 1e12) {
      return InvalidArgument(where + ".max_core_hours must be a number of core-hours above 0");
    }
    out->set_max_core_hours(hours);
    out->set_window_s(7 * 86400);
  }
  if (node["window"]) {
    if (!node["max_core_hours"]) {
      return InvalidArgument(where + ".window is the window of max_core_hours: set that too");
    }
    auto d = ReadDuration(node["window"], where + ".window");
    if (!d.ok()) return d.status();
    if (*d < 60 || *d > 366 * 86400) {
      return InvalidArgument(where + ".window must be from 1m to 366d");
    }
    out->set_window_s(*d);
  }
  return Status::Ok();
}

// pools: {POOL: {limit: N, guaranteed: N}} (limit may be called max for queues); a tenant's also
// {nominal: N, borrowing_limit: N, lending_limit: N} (the account tree).
Status ReadPoolCaps(const YAML::Node& node, const std::string& where, const char* limit_name,
                    google::protobuf::RepeatedPtrField<v1::PoolCap>* out) {
  if (!node.IsMap()) return InvalidArgument(where + " must map pool names to capacities");
  const bool tenant = std::string(limit_name) == "limit";
  std::set<std::string> known{limit_name, "guaranteed"};
  if (tenant) known.insert({"nominal", "borrowing_limit", "lending_limit"});
  for (const auto& kv : node) {
    const std::string pool = kv.first.as<std::string>();
    const std::string at = where + "." + pool;
    SNN_RETURN_IF_ERROR(CheckKnownFields(kv.second, at, known));
    v1::PoolCap* cap = out->Add();
    cap->set_pool(pool);
    using Setter = void (v1::PoolCap::*)(uint64_t);
    const std::pair<std::string, Setter> fields[] = {
        {limit_name, &v1::PoolCap::set_limit},
        {"guaranteed", &v1::PoolCap::set_guaranteed},
        {"nominal", &v1::PoolCap::set_nominal},
        {"borrowing_limit", &v1::PoolCap::set_borrowing_limit},
        {"lending_limit", &v1::PoolCap::set_lending_limit}};
    for (const auto& [name, set] : fields) {
      if (!kv.second[name]) continue;
      auto v = ReadWholeNumber(kv.second[name], at + "." + name, 0, kMaxCores);
      if (!v.ok()) return v.status();
      (cap->*set)(static_cast<uint64_t>(*v));
    }
  }
  return Status::Ok();
}

// A list of names: users or group names.
Status ReadNames(const YAML::Node& node, const std::string& where,
                 google::protobuf::RepeatedPtrField<std::string>* out) {
  if (!node.IsSequence()) return InvalidArgument(where + " must be a list of names");
  for (size_t i = 0; i < node.size(); ++i) {
    auto name = ReadString(node[i], where + "[" + std::to_string(i) + "]");
    if (!name.ok()) return name.status();
    if (name->empty() || name->size() > 64) {
      return InvalidArgument(where + "[" + std::to_string(i) + "] must be 1 to 64 characters");
    }
    *out->Add() = *name;
  }
  return Status::Ok();
}

// {users: [...], groups: [...]}
Status ReadMembers(const YAML::Node& node, const std::string& where, v1::Members* out) {
  if (!node.IsMap()) return InvalidArgument(where + " must be a map with users and groups");
  SNN_RETURN_IF_ERROR(CheckKnownFields(node, where, {"users", "groups"}));
  if (node["users"])
    SNN_RETURN_IF_ERROR(ReadNames(node["users"], where + ".users", out->mutable_users()));
  if (node["groups"]) {
    SNN_RETURN_IF_ERROR(ReadNames(node["groups"], where + ".groups", out->mutable_groups()));
  }
  return Status::Ok();
}

Status ReadAccess(const YAML::Node& node, v1::AccessConfig* out) {
  SNN_RETURN_IF_ERROR(
      CheckKnownFields(node, "access", {"admins", "operators", "readers", "personal_tenants"}));
  if (node["admins"])
    SNN_RETURN_IF_ERROR(ReadMembers(node["admins"], "access.admins", out->mutable_admins()));
  if (node["operators"]) {
    SNN_RETURN_IF_ERROR(
        ReadMembers(node["operators"], "access.operators", out->mutable_operators()));
  }
  if (node["readers"]) {
    SNN_RETURN_IF_ERROR(ReadMembers(node["readers"], "access.readers", out->mutable_readers()));
  }
  if (node["personal_tenants"]) out->set_personal_tenants(node["personal_tenants"].as<bool>());
  return Status::Ok();
}

}  // namespace

// billing: {currency, minimum, prices: {TYPE: {core_hour, ksps_hour}}, discounts:
// [{over_core_hours, percent}], alert_at: [fractions of the credit]}
Status ReadBilling(const YAML::Node& b, v1::BillingConfig* out) {
  SNN_RETURN_IF_ERROR(
      CheckKnownFields(b, "billing", {"currency", "minimum", "prices", "discounts", "alert_at"}));
  if (b["currency"]) {
    auto c = ReadString(b["currency"], "billing.currency");
    if (!c.ok()) return c.status();
    if (c->size() > 16) return InvalidArgument("billing.currency: at most 16 characters");
    out->set_currency(*c);
  }
  if (b["minimum"]) {
    auto m = ReadDuration(b["minimum"], "billing.minimum");
    if (!m.ok()) return m.status();
    out->set_minimum_s(*m);
  }
  if (const YAML::Node prices = b["prices"]) {
    if (!prices.IsMap()) return InvalidArgument("billing.prices must map board types to prices");
    for (const auto& kv : prices) {
      const std::string type = kv.first.as<std::string>();
      const std::string at = "billing.prices." + type;
      SNN_RETURN_IF_ERROR(CheckKnownFields(kv.second, at, {"core_hour", "ksps_hour", "unit_hour"}));
      v1::BoardPrice* p = out->add_prices();
      p->set_board_type(type);
      for (const char* name : {"core_hour", "ksps_hour", "unit_hour"}) {
        if (!kv.second[name]) continue;
        auto v = ReadNumber(kv.second[name], at + "." + name, 0, 1e6);
        if (!v.ok()) return v.status();
        if (std::string(name) == "core_hour") {
          p->set_core_hour(*v);
        } else if (std::string(name) == "ksps_hour") {
          p->set_ksps_hour(*v);
        } else {
          p->set_unit_hour(*v);
        }
      }
    }
  }
  if (const YAML::Node discounts = b["discounts"]) {
    if (!discounts.IsSequence()) return InvalidArgument("billing.discounts must be a list");
    for (size_t i = 0; i < discounts.size(); ++i) {
      const std::string at = "billing.discounts[" + std::to_string(i) + "]";
      SNN_RETURN_IF_ERROR(CheckKnownFields(discounts[i], at, {"over_core_hours", "percent"}));
      auto over = ReadNumber(discounts[i]["over_core_hours"], at + ".over_core_hours", 0, 1e12);
      if (!over.ok()) return over.status();
      auto percent = ReadNumber(discounts[i]["percent"], at + ".percent", 0, 100);
      if (!percent.ok()) return percent.status();
      v1::VolumeDiscount* d = out->add_discounts();
      d->set_over_core_hours(*over);
      d->set_percent(*percent);
    }
  }
  if (const YAML::Node alerts = b["alert_at"]) {
    if (!alerts.IsSequence()) return InvalidArgument("billing.alert_at must be a list");
    for (size_t i = 0; i < alerts.size() && i < 16; ++i) {
      auto v = ReadNumber(alerts[i], "billing.alert_at[" + std::to_string(i) + "]", 0.01, 10);
      if (!v.ok()) return v.status();
      out->add_alert_at(*v);
    }
    std::sort(out->mutable_alert_at()->begin(), out->mutable_alert_at()->end());
  }
  return Status::Ok();
}

namespace {

// scheduler: backfill, preemption, requeues, suspending, sessions.
Status ReadScheduler(const YAML::Node& s, v1::SchedulingConfig& c) {
  SNN_RETURN_IF_ERROR(CheckKnownFields(
      s, "scheduler",
      {"backfill", "backfill_order", "backfill_age_first_after", "preemption", "preempt_grace",
       "max_lost_requeues", "suspend_after", "session_idle_limit"}));
  if (s["backfill"]) c.set_backfill(s["backfill"].as<std::string>());
  if (s["backfill_order"]) c.set_backfill_order(s["backfill_order"].as<std::string>());
  if (s["preemption"]) c.set_preemption(s["preemption"].as<bool>());
  if (s["backfill_age_first_after"]) {
    auto a = ReadDuration(s["backfill_age_first_after"], "scheduler.backfill_age_first_after");
    if (!a.ok()) return a.status();
    c.set_backfill_age_first_after_s(*a);
  }
  if (s["max_lost_requeues"]) {
    auto n = ReadWholeNumber(s["max_lost_requeues"], "scheduler.max_lost_requeues", 0, 1000);
    if (!n.ok()) return n.status();
    c.set_max_lost_requeues(static_cast<uint32_t>(*n));
  }
  if (s["preempt_grace"]) {
    auto g = ReadDuration(s["preempt_grace"], "scheduler.preempt_grace");
    if (!g.ok()) return g.status();
    c.set_preempt_grace_s(*g);
  }
  if (s["suspend_after"]) {
    auto idle = ReadDuration(s["suspend_after"], "scheduler.suspend_after");
    if (!idle.ok()) return idle.status();
    c.set_suspend_after_s(*idle);
  }
  if (s["session_idle_limit"]) {
    auto idle = ReadDuration(s["session_idle_limit"], "scheduler.session_idle_limit");
    if (!idle.ok()) return idle.status();
    c.set_session_idle_limit_s(*idle);
  }
  return Status::Ok();
}

// priority: the factors' weights and their time constants.
Status ReadPriority(const YAML::Node& p, v1::PriorityConfig* out) {
  SNN_RETURN_IF_ERROR(CheckKnownFields(p, "priority",
                                       {"weights", "max_age", "fairshare_half_life", "starve_after",
                                        "favor_small", "accrue_per_tenant"}));
  if (const YAML::Node w = p["weights"]) {
    SNN_RETURN_IF_ERROR(CheckKnownFields(w, "priority.weights",
                                         {"age", "fairshare", "size", "queue", "job", "slowdown"}));
    const std::map<std::string, void (v1::PriorityConfig::*)(double)> setters = {
        {"age", &v1::PriorityConfig::set_age_weight},
        {"fairshare", &v1::PriorityConfig::set_fairshare_weight},
        {"size", &v1::PriorityConfig::set_size_weight},
        {"queue", &v1::PriorityConfig::set_queue_weight},
        {"job", &v1::PriorityConfig::set_job_weight},
        {"slowdown", &v1::PriorityConfig::set_slowdown_weight}};
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
  if (p["accrue_per_tenant"]) {
    auto n = ReadWholeNumber(p["accrue_per_tenant"], "priority.accrue_per_tenant", 0, 1000000);
    if (!n.ok()) return n.status();
    out->set_accrue_per_tenant(static_cast<uint32_t>(*n));
  }
  return Status::Ok();
}

// queues: each with its priority, weight and pool caps.
Status ReadQueues(const YAML::Node& queues, v1::SchedulingConfig& c) {
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
      SNN_RETURN_IF_ERROR(ReadPoolCaps(q["pools"], where + ".pools", "max", out->mutable_pools()));
  }
  return Status::Ok();
}

// tenants: the tree, its weights, quotas, members, coordinators and limits.
Status ReadTenants(const YAML::Node& tenants, v1::SchedulingConfig& c) {
  if (!tenants.IsSequence()) return InvalidArgument("tenants must be a list");
  for (size_t i = 0; i < tenants.size(); ++i) {
    const YAML::Node t = tenants[i];
    const std::string where = "tenants[" + std::to_string(i) + "]";
    SNN_RETURN_IF_ERROR(CheckKnownFields(
        t, where,
        {"name", "parent", "weight", "quotas", "users", "groups", "coordinators", "limits"}));
    auto* out = c.add_tenants();
    auto name = ReadString(t["name"], where + ".name");
    if (!name.ok()) return name.status();
    out->set_name(*name);
    out->set_weight(1);
    if (t["parent"]) {
      auto parent = ReadString(t["parent"], where + ".parent");
      if (!parent.ok()) return parent.status();
      out->set_parent(*parent);
    }
    if (t["weight"]) {
      auto v = ReadWeight(t["weight"], where + ".weight");
      if (!v.ok()) return v.status();
      out->set_weight(*v);
    }
    if (t["quotas"])
      SNN_RETURN_IF_ERROR(
          ReadPoolCaps(t["quotas"], where + ".quotas", "limit", out->mutable_quotas()));
    if (t["users"]) {
      SNN_RETURN_IF_ERROR(
          ReadNames(t["users"], where + ".users", out->mutable_members()->mutable_users()));
    }
    if (t["groups"]) {
      SNN_RETURN_IF_ERROR(
          ReadNames(t["groups"], where + ".groups", out->mutable_members()->mutable_groups()));
    }
    if (t["coordinators"]) {
      SNN_RETURN_IF_ERROR(
          ReadNames(t["coordinators"], where + ".coordinators", out->mutable_coordinators()));
    }
    if (t["limits"]) {
      SNN_RETURN_IF_ERROR(ReadUsageLimits(t["limits"], where + ".limits", out->mutable_limits()));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<v1::SchedulingConfig> ParsePolicyYaml(const std::string& text) {
  v1::SchedulingConfig c = DefaultSchedulingConfig();
  try {
    auto loaded = LoadYamlDocument(text, "the policy file");
    if (!loaded.ok()) return loaded.status();
    const YAML::Node root = *loaded;
    if (!root.IsMap()) return InvalidArgument("the policy file must be a map");
    SNN_RETURN_IF_ERROR(CheckKnownFields(
        root, "the policy file",
        {"scheduler", "priority", "queues", "tenants", "access", "billing", "limits", "licenses"}));
    if (const YAML::Node l = root["licenses"]) {
      auto licenses = ReadCountMap(l, "licenses", 1'000'000, kMaxLicenses);
      if (!licenses.ok()) return licenses.status();
      c.mutable_licenses()->insert(licenses->begin(), licenses->end());
    }
    if (const YAML::Node b = root["billing"]) {
      SNN_RETURN_IF_ERROR(ReadBilling(b, c.mutable_billing()));
    }
    if (const YAML::Node a = root["access"]) SNN_RETURN_IF_ERROR(ReadAccess(a, c.mutable_access()));
    if (const YAML::Node s = root["scheduler"]) {
      SNN_RETURN_IF_ERROR(ReadScheduler(s, c));
    }
    if (const YAML::Node p = root["priority"]) {
      SNN_RETURN_IF_ERROR(ReadPriority(p, c.mutable_priority()));
    }
    if (const YAML::Node queues = root["queues"]) {
      SNN_RETURN_IF_ERROR(ReadQueues(queues, c));
    }
    if (const YAML::Node limits = root["limits"]) {
      SNN_RETURN_IF_ERROR(CheckKnownFields(limits, "limits", {"per_user"}));
      if (limits["per_user"]) {
        SNN_RETURN_IF_ERROR(
            ReadUsageLimits(limits["per_user"], "limits.per_user", c.mutable_user_limits()));
      }
    }
    if (const YAML::Node tenants = root["tenants"]) {
      SNN_RETURN_IF_ERROR(ReadTenants(tenants, c));
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

}  // namespace snn
