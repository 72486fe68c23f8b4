// How close a running gang's replicas are, pair by pair, as the nodes' topology has it now
// (for `snnctl show`). Pure: reads the node registry.
#pragma once

#include <string>
#include <vector>

#include "master/nodes/node_registry.h"
#include "proto/job.pb.h"

namespace snn {

// The first 8 replicas' pairs (at most 28 lines), e.g. "task 0 (n1/0) - task 1 (n1/1): ...".
std::vector<std::string> GangLinks(const NodeRegistry& nodes, const v1::JobRecord& job);

}  // namespace snn
