#include "master/auth/access_policy.h"

#include <grp.h>
#include <pwd.h>

#include <algorithm>
#include <vector>

namespace snn {
namespace {

bool Listed(const google::protobuf::RepeatedPtrField<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool InMembers(const v1::Members& members, const Identity& who) {
  if (Listed(members.users(), who.user) || Listed(members.users(), std::to_string(who.uid))) {
    return true;
  }
  for (const auto& g : who.groups) {
    if (Listed(members.groups(), g)) return true;
  }
  return false;
}

const v1::TenantConfig* Declared(const v1::SchedulingConfig& policy, const std::string& tenant) {
  for (const auto& t : policy.tenants()) {
    if (t.name() == tenant) return &t;
  }
  return nullptr;
}

}  // namespace

Role RoleOf(const v1::AccessConfig& access, const Identity& who, uint32_t master_uid) {
  if (who.kind != Identity::Kind::kUser) return Role::kUser;
  if (who.uid == 0 || who.uid == master_uid || InMembers(access.admins(), who)) return Role::kAdmin;
  if (InMembers(access.operators(), who)) return Role::kOperator;
  if (InMembers(access.readers(), who)) return Role::kReader;
  return Role::kUser;
}

bool IsMember(const v1::SchedulingConfig& policy, const Identity& who, const std::string& tenant) {
  if (who.kind != Identity::Kind::kUser || tenant.empty()) return false;
  if (const v1::TenantConfig* t = Declared(policy, tenant)) {
    return InMembers(t->members(), who) || Listed(t->coordinators(), who.user);
  }
  const bool personal =
      !policy.access().has_personal_tenants() || policy.access().personal_tenants();
  return personal && tenant == who.user;
}

bool IsCoordinator(const v1::SchedulingConfig& policy, const Identity& who,
                   const std::string& tenant) {
  const v1::TenantConfig* t = Declared(policy, tenant);
  return who.kind == Identity::Kind::kUser && t != nullptr && Listed(t->coordinators(), who.user);
}

Result<std::string> ActingTenant(const v1::SchedulingConfig& policy, const Identity& who,
                                 const std::string& requested) {
  if (!requested.empty()) {
    if (who.role == Role::kAdmin || IsMember(policy, who, requested)) return requested;
    return PermissionDenied(who.Describe() + " may not act for tenant '" + requested +
                            "': it is not a member (see snnctl policy show)");
  }
  if (IsMember(policy, who, who.user) || who.role == Role::kAdmin) return who.user;
  for (const auto& t : policy.tenants()) {
    if (IsMember(policy, who, t.name())) return t.name();
  }
  return PermissionDenied(who.Describe() +
                          " belongs to no tenant; an admin adds users to tenants in the policy");
}

Status MayRead(const v1::SchedulingConfig& policy, const Identity& who, const std::string& tenant) {
  if (who.role >= Role::kReader || IsMember(policy, who, tenant)) return Status::Ok();
  return PermissionDenied("reading tenant '" + tenant + "' needs membership or the reader role; " +
                          who.Describe() + " has neither");
}

bool MayManageJob(const v1::SchedulingConfig& policy, const Identity& who,
                  const std::string& tenant, uint32_t owner_uid, const std::string& owner) {
  if (who.kind != Identity::Kind::kUser) return false;
  if (who.role == Role::kAdmin) return true;
  if (who.uid == owner_uid && who.user == owner) return true;
  return IsCoordinator(policy, who, tenant);
}

void ResolveUser(Identity& who) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(who.uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    who.user = found->pw_name;
    std::vector<gid_t> gids(64);
    int count = static_cast<int>(gids.size());
    if (getgrouplist(found->pw_name, who.gid, gids.data(), &count) < 0 && count > 0 &&
        count <= 4096) {
      gids.resize(static_cast<size_t>(count));
      getgrouplist(found->pw_name, who.gid, gids.data(), &count);
    }
    gids.resize(static_cast<size_t>(std::max(count, 0)));
    for (gid_t g : gids) {
      group gr{};
      group* gfound = nullptr;
      std::vector<char> gbuf(16384);
      if (getgrgid_r(g, &gr, gbuf.data(), gbuf.size(), &gfound) == 0 && gfound != nullptr) {
        who.groups.emplace_back(gfound->gr_name);
      }
    }
  } else {
    who.user = std::to_string(who.uid);
    group gr{};
    group* gfound = nullptr;
    if (getgrgid_r(who.gid, &gr, buf.data(), buf.size(), &gfound) == 0 && gfound != nullptr) {
      who.groups.emplace_back(gfound->gr_name);
    }
  }
}

}  // namespace snn
