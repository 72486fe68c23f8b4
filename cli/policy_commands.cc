#include "cli/policy_commands.h"

#include <charconv>
#include <cstdlib>
#include <map>

#include "cli/format.h"
#include "cli/session.h"
#include "common/base/duration.h"
#include "proto/policy.pb.h"

namespace snn {
namespace {

// "; each user at most 100 jobs pending or running, time limits up to 2d" ("" without limits).
std::string Describe(const v1::UsageLimits& l, const std::string& whose) {
  std::string parts;
  if (l.max_submitted() > 0) {
    parts += "at most " + std::to_string(l.max_submitted()) + " jobs pending or running";
  }
  if (l.max_running() > 0) {
    parts += (parts.empty() ? "" : ", ") + std::string("at most ") +
             std::to_string(l.max_running()) + " running";
  }
  if (l.max_time_limit_s() > 0) {
    parts += (parts.empty() ? "" : ", ") + std::string("time limits up to ") +
             FormatDurationUnit(l.max_time_limit_s());
  }
  if (l.max_core_hours() > 0) {
    char hours[32];
    snprintf(hours, sizeof hours, "%.3g", l.max_core_hours());
    parts += (parts.empty() ? "" : ", ") + std::string("at most ") + hours + " core-hours in any " +
             FormatDurationUnit(l.window_s());
  }
  return parts.empty() ? "" : "; " + whose + " " + parts;
}

Result<uint64_t> Cores(const std::string& name, const std::string& text) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v > (uint64_t{1} << 40)) {
    return InvalidArgument("--" + name + " is '" + text +
                           "'; give a whole number of cores, 0 or more");
  }
  return v;
}

Result<double> Weight(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(v >= 0) || v > 1e9) {
    return InvalidArgument("--weight is '" + text + "'; give a number from 0 to 1e9");
  }
  return v;
}

std::string Caps(const google::protobuf::RepeatedPtrField<v1::PoolCap>& caps, const char* limit) {
  std::string s;
  for (const auto& c : caps) {
    s += "; pool " + c.pool() + ": " + limit + " " +
         (c.has_limit() ? std::to_string(c.limit()) : std::string("none")) + ", guaranteed " +
         std::to_string(c.guaranteed());
    if (c.has_nominal()) s += ", nominal " + std::to_string(c.nominal());
    if (c.has_borrowing_limit()) s += ", borrowing limit " + std::to_string(c.borrowing_limit());
    if (c.has_lending_limit()) s += ", lending limit " + std::to_string(c.lending_limit());
  }
  return s;
}

std::string Describe(const v1::QueueConfig& q) {
  char w[32];
  snprintf(w, sizeof w, "%g", q.weight());
  return "queue " + q.name() + ": priority " + std::to_string(q.priority()) + ", weight " + w +
         Caps(q.pools(), "max");
}

std::string Names(const google::protobuf::RepeatedPtrField<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// "; users a,b; groups g" (only the parts that are set)
std::string Describe(const v1::Members& m) {
  std::string out;
  if (m.users_size() > 0) out += "; users " + Names(m.users());
  if (m.groups_size() > 0) out += "; groups " + Names(m.groups());
  return out;
}

std::string Describe(const v1::TenantConfig& t) {
  char w[32];
  snprintf(w, sizeof w, "%g", t.weight());
  std::string out = "tenant " + t.name() + (t.parent().empty() ? "" : " (in " + t.parent() + ")") +
                    ": weight " + w + Caps(t.quotas(), "limit") + Describe(t.limits(), "its jobs") +
                    Describe(t.members());
  if (t.coordinators_size() > 0) out += "; coordinators " + Names(t.coordinators());
  return out;
}

// Applies --pool with --max/--limit, --guaranteed and a tenant's --nominal, --borrowing-limit
// and --lending-limit to `caps`.
Status SetCap(const CliOptions& o, const char* limit_flag,
              google::protobuf::RepeatedPtrField<v1::PoolCap>* caps) {
  const auto& s = o.settings;
  using Setter = void (v1::PoolCap::*)(uint64_t);
  const std::pair<std::string, Setter> fields[] = {
      {limit_flag, &v1::PoolCap::set_limit},
      {"guaranteed", &v1::PoolCap::set_guaranteed},
      {"nominal", &v1::PoolCap::set_nominal},
      {"borrowing-limit", &v1::PoolCap::set_borrowing_limit},
      {"lending-limit", &v1::PoolCap::set_lending_limit}};
  if (!s.count("pool")) {
    for (const auto& [flag, set] : fields) {
      if (s.count(flag)) return InvalidArgument("--" + flag + " needs --pool");
    }
    return Status::Ok();
  }
  v1::PoolCap cap;
  cap.set_pool(s.at("pool"));
  for (const auto& c : *caps) {
    if (c.pool() == cap.pool()) cap = c;
  }
  for (const auto& [flag, set] : fields) {
    if (!s.count(flag)) continue;
    auto v = Cores(flag, s.at(flag));
    if (!v.ok()) return v.status();
    (cap.*set)(*v);
  }
  caps->Clear();
  *caps->Add() = cap;  // the master merges by pool
  return Status::Ok();
}

}  // namespace

int PolicyShow(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() != 2 || o.args[1] != "show")
    return Fail(err, InvalidArgument("usage: snnctl policy show"));
  auto resp = Call(o, rpc::kPolicyGet, v1::PolicyGetRequest());
  if (!resp.ok()) return Fail(err, resp.status());
  const v1::SchedulingConfig& c = resp->config();
  if (o.output == "json") {
    out << FormatJson(c) << "\n";
    return 0;
  }
  const auto& p = c.priority();
  out << "scheduler: backfill " << c.backfill() << ", backfill order " << c.backfill_order();
  if (c.backfill_order() == "shortest_first" && c.backfill_age_first_after_s() > 0) {
    out << " (jobs waiting over " << FormatDurationUnit(c.backfill_age_first_after_s())
        << " first)";
  }
  out << ", preemption " << (c.preemption() ? "on" : "off") << " (grace "
      << FormatDurationUnit(c.preempt_grace_s()) << ")";
  if (c.has_max_lost_requeues())
    out << ", at most " << c.max_lost_requeues() << " requeues after lost tasks";
  if (c.session_idle_limit_s() > 0) {
    out << ", sessions with no step for " << FormatDurationUnit(c.session_idle_limit_s()) << " end";
  }
  if (c.suspend_after_s() > 0) {
    out << ", driver boards power off after " << FormatDurationUnit(c.suspend_after_s()) << " idle";
  }
  out << "\n";
  out << "priority weights: age " << p.age_weight() << ", fairshare " << p.fairshare_weight()
      << ", size " << p.size_weight() << (p.favor_small() ? " (favoring small)" : "") << ", queue "
      << p.queue_weight() << ", job " << p.job_weight() << ", slowdown " << p.slowdown_weight()
      << "; full age after " << FormatDurationUnit(p.max_age_s()) << "; fair-share half-life "
      << FormatDurationUnit(p.fairshare_half_life_s()) << "; starvation guard "
      << FormatDurationUnit(p.starve_after_s());
  if (p.accrue_per_tenant() > 0) {
    out << "; waiting time accrues for " << p.accrue_per_tenant() << " jobs per tenant";
  }
  out << "\n";
  for (const auto& q : c.queues()) out << Describe(q) << "\n";
  if (const std::string limits = Describe(c.user_limits(), "each user"); !limits.empty()) {
    out << "limits:" << limits.substr(1) << "\n";
  }
  if (!c.licenses().empty()) {
    std::string licenses;
    for (const auto& [name, count] :
         std::map<std::string, uint32_t>(c.licenses().begin(), c.licenses().end())) {
      licenses += (licenses.empty() ? "" : ", ") + name + " " + std::to_string(count);
    }
    out << "licenses: " << licenses << "\n";
  }
  for (const auto& t : c.tenants()) out << Describe(t) << "\n";
  const v1::AccessConfig& a = c.access();
  out << "access: admins uid 0 and the master's user" << Describe(a.admins());
  if (a.operators().users_size() + a.operators().groups_size() > 0) {
    out << "; operators" << Describe(a.operators()).substr(1);
  }
  if (a.readers().users_size() + a.readers().groups_size() > 0) {
    out << "; readers" << Describe(a.readers()).substr(1);
  }
  out << "; personal tenants " << (!a.has_personal_tenants() || a.personal_tenants() ? "on" : "off")
      << "\n";
  return 0;
}

int PolicySet(const CliOptions& o, std::ostream& out, std::ostream& err) {
  const bool queue = o.args[0] == "queue";
  const std::string usage = queue ? "usage: snnctl queue set NAME [--priority N] [--weight W] "
                                    "[--pool P [--max N] [--guaranteed N]] [--create]"
                                  : "usage: snnctl tenant set NAME [--weight W] [--parent TENANT] "
                                    "[--pool P [--limit N] [--guaranteed N] [--nominal N] "
                                    "[--borrowing-limit N] [--lending-limit N]] [--create]";
  if (o.args.size() != 3 || o.args[1] != "set") return Fail(err, InvalidArgument(usage));
  const std::string& name = o.args[2];
  for (const auto& [flag, value] : o.settings) {
    const bool allowed = flag == "weight" || flag == "pool" || flag == "guaranteed" ||
                         (queue ? flag == "priority" || flag == "max"
                                : flag == "limit" || flag == "parent" || flag == "nominal" ||
                                      flag == "borrowing-limit" || flag == "lending-limit");
    if (!allowed) return Fail(err, InvalidArgument("--" + flag + " does not apply here; " + usage));
  }
  auto current = Call(o, rpc::kPolicyGet, v1::PolicyGetRequest());
  if (!current.ok()) return Fail(err, current.status());
  Result<v1::PolicySetResponse> resp = InvalidArgument("");
  if (queue) {
    v1::SetQueueRequest req;
    req.set_create(o.create);
    v1::QueueConfig& q = *req.mutable_queue();
    q.set_name(name);
    q.set_weight(1);
    for (const auto& e : current->config().queues()) {
      if (e.name() == name) q = e;
    }
    if (o.settings.count("priority")) {
      const std::string& text = o.settings.at("priority");
      int32_t v = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || p != text.data() + text.size() || v < -1000000 || v > 1000000) {
        return Fail(err, InvalidArgument("--priority is '" + text + "'; give a whole number"));
      }
      q.set_priority(v);
    }
    if (o.settings.count("weight")) {
      auto w = Weight(o.settings.at("weight"));
      if (!w.ok()) return Fail(err, w.status());
      q.set_weight(*w);
    }
    if (Status s = SetCap(o, "max", q.mutable_pools()); !s.ok()) return Fail(err, s);
    resp = Call(o, rpc::kQueueSet, req);
  } else {
    v1::SetTenantRequest req;
    req.set_create(o.create);
    v1::TenantConfig& t = *req.mutable_tenant();
    t.set_name(name);
    t.set_weight(1);
    for (const auto& e : current->config().tenants()) {
      if (e.name() == name) t = e;
    }
    if (o.settings.count("weight")) {
      auto w = Weight(o.settings.at("weight"));
      if (!w.ok()) return Fail(err, w.status());
      t.set_weight(*w);
    }
    if (o.settings.count("parent")) t.set_parent(o.settings.at("parent"));
    if (Status s = SetCap(o, "limit", t.mutable_quotas()); !s.ok()) return Fail(err, s);
    resp = Call(o, rpc::kTenantSet, req);
  }
  if (!resp.ok()) return Fail(err, resp.status());
  for (const auto& q : resp->config().queues()) {
    if (queue && q.name() == name) out << Describe(q) << "\n";
  }
  for (const auto& t : resp->config().tenants()) {
    if (!queue && t.name() == name) out << Describe(t) << "\n";
  }
  return 0;
}

int TenantMembers(const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (o.args.size() < 4) {
    return Fail(err, InvalidArgument("usage: snnctl tenant add-user|remove-user TENANT USER..."));
  }
  v1::TenantMembersRequest req;
  req.set_tenant(o.args[2]);
  for (size_t i = 3; i < o.args.size(); ++i) {
    if (o.args[1] == "add-user") {
      req.add_add_users(o.args[i]);
    } else {
      req.add_remove_users(o.args[i]);
    }
  }
  auto resp = Call(o, rpc::kTenantMembers, req);
  if (!resp.ok()) return Fail(err, resp.status());
  for (const auto& t : resp->config().tenants()) {
    if (t.name() != o.args[2]) continue;
    std::string users;
    for (const auto& u : t.members().users()) users += (users.empty() ? "" : ", ") + u;
    out << "Tenant " << t.name() << " users: " << (users.empty() ? "(none)" : users) << "\n";
  }
  return 0;
}

}  // namespace snn
