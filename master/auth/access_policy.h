// Who may do what, from the access part of the policy: cluster roles (admin, operator, reader;
// everyone else a user), tenant membership (users and groups), and tenant coordinators. Pure
// functions of the policy and a verified identity; thread-compatible.
#pragma once

#include <cstdint>
#include <string>

#include "common/base/status.h"
#include "common/identity/identity.h"
#include "proto/policy.pb.h"

namespace snn {

// uid 0 and `master_uid` (the user the master runs as) are always admins.
Role RoleOf(const v1::AccessConfig& access, const Identity& who, uint32_t master_uid);

bool IsMember(const v1::SchedulingConfig& policy, const Identity& who, const std::string& tenant);
bool IsCoordinator(const v1::SchedulingConfig& policy, const Identity& who,
                   const std::string& tenant);

// The tenant a user's request acts for: `requested` when the user belongs to it (admins: any),
// else its default (its personal tenant, else the first declared tenant it belongs to).
Result<std::string> ActingTenant(const v1::SchedulingConfig& policy, const Identity& who,
                                 const std::string& requested);

// Whether `who` may see every job of `tenant` (a member, or the reader role and above).
Status MayRead(const v1::SchedulingConfig& policy, const Identity& who, const std::string& tenant);

// The owner, its tenant's coordinators and admins: may cancel the job and see its env.
bool MayManageJob(const v1::SchedulingConfig& policy, const Identity& who,
                  const std::string& tenant, uint32_t owner_uid, const std::string& owner);

// Fills the user's name and group names from the uid and gid (NSS); a uid without a passwd
// entry is named by its number.
void ResolveUser(Identity& who);

}  // namespace snn
