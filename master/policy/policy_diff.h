// What changed between two scheduling policies, in words, for the log of a reload: the queues
// and tenants added, removed or changed (by name), and every other section that differs.
// Pure.
#pragma once

#include <string>

#include "proto/policy.pb.h"

namespace snn {

// "queues: added urgent, changed default; tenants: removed lab; priority, billing"; "" when the
// two are the same.
std::string DescribePolicyChange(const v1::SchedulingConfig& before,
                                 const v1::SchedulingConfig& after);

}  // namespace snn
