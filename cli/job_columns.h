// The columns of `snnctl jobs --format id,name,state,...` (squeue's and sacct's --format): each
// a name, a header and how to show it for a job. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/base/status.h"
#include "proto/job.pb.h"

namespace snn {

struct JobColumn {
  const char* name;
  const char* header;
  std::string (*value)(const v1::JobRecord& job, int64_t now_ms);
};

// "id,name,state" (any case, spaces allowed) as columns; an unknown name is refused with the
// list of known ones.
Result<std::vector<const JobColumn*>> ParseJobColumns(const std::string& list);
// Every column's name, comma-separated.
std::string JobColumnNames();

std::string FormatJobColumns(const v1::ListJobsResponse& jobs,
                             const std::vector<const JobColumn*>& columns, int64_t now_ms);

}  // namespace snn
