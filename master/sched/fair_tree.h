// Fair share down the account tree (TenantConfig.parent), as Slurm's classic multifactor fair
// share over an account hierarchy. For each node n under a parent p, among its siblings s:
//   share(n)     = share(p) x weight(n) / sum of weight(s)
//   usage(n)     = the decayed usage of n's subtree / everyone's
//   effective(n) = usage(n) + (effective(p) - usage(n)) x weight(n) / sum of weight(s)
// and at the top, share = weight / the top's weights, effective = usage. A tenant's fair-share
// factor is then 2^(-effective / share) (master/sched/priority.h): a group that used more than
// its share pulls every project under it down, and a project's own use counts against its
// siblings first. Without parents it is the flat fair share. Pure.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "proto/policy.pb.h"

namespace snn {

struct ShareTerms {
  double usage_share = 0;   // effective usage, a share of everyone's
  double weight_share = 1;  // of the whole tree
};

// The terms of each tenant in `working` (tenants with pending work; those the policy does not
// declare are at the top with weight 1). `usage`: a tenant's own decayed usage; `total`:
// everyone's.
std::map<std::string, ShareTerms, std::less<>> FairShareDownTheTree(
    const v1::SchedulingConfig& config, const std::vector<std::string_view>& working,
    const std::function<double(const std::string&)>& usage, double total);

}  // namespace snn
