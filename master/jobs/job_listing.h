// One page of `snnctl jobs`: the hot jobs (in memory) and the archived ones (in the store),
// merged in global id order and filtered. A page's cost is bounded whatever the archive holds:
// at most `limit` jobs, and at most `archive_budget` archive summaries looked at.
// Thread contract: only on the master's io thread.
#pragma once

#include <cstdint>
#include <functional>

#include "master/jobs/job_archive.h"
#include "master/jobs/job_table.h"

namespace snn {

struct JobListEnd {
  bool more = false;           // ask again from next_after_id
  uint64_t next_after_id = 0;  // everything at or below it was looked at
};

// Hands each matching job with an id above `after_id` to `add`, in id order, up to `limit`;
// `add` returns false when the page is full.
Result<JobListEnd> ListJobs(const JobTable& jobs, JobArchive& archive, const JobFilter& filter,
                            uint64_t after_id, size_t limit, size_t archive_budget,
                            const std::function<bool(const v1::JobRecord&)>& add);

}  // namespace snn
