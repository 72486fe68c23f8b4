// A slice of a task attempt's stdout or stderr, as `snnctl logs` asks for it through the
// master: read from the agent's own task directory, found from the task's key (the request
// names no path), and bounded. Thread-compatible; blocking file reads (small, local).
#pragma once

#include <string>

#include "common/base/status.h"
#include "proto/node.pb.h"

namespace snn {

inline constexpr uint32_t kMaxOutputSliceBytes = 1 << 20;

// The directory of a task attempt under the agent's data dir, named as its tenant knows the
// job: "lab-a.job18.task0.try1". Unique: a tenant's job ids are never reused, and tenant names
// cannot hold the "/" that would leave the directory.
std::string TaskDirName(const std::string& tenant, uint64_t tenant_job_id, uint32_t index,
                        uint32_t attempt);

// The directory of the task a request names, under `data_dir`, or why the request names none.
Result<std::string> TaskDirOf(const std::string& data_dir, const v1::TaskOutputRequest& request);

Result<v1::TaskOutputResponse> ReadTaskOutput(const std::string& data_dir,
                                              const v1::TaskOutputRequest& request);

}  // namespace snn
