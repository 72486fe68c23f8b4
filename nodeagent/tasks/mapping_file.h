// The mapping file a task reads to learn where its logical cores live: for each logical core,
// its physical core and the relay paths for configuration and for spikes. Written when a task
// starts and rewritten when it is moved off a dead core. Pure apart from the file; thread-safe.
#pragma once

#include "common/base/status.h"
#include "proto/node.pb.h"

namespace snn {

// Writes `mapping` to mapping.mapping_file() (JSON), for a task on `board`.
Status WriteMappingFile(const v1::TaskMapping& mapping, const v1::BoardInfo& board);

}  // namespace snn
