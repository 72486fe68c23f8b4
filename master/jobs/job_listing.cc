#include "master/jobs/job_listing.h"

namespace snn {

Result<JobListEnd> ListJobs(const JobTable& jobs, JobArchive& archive, const JobFilter& filter,
                            uint64_t after_id, size_t limit, size_t archive_budget,
                            const std::function<bool(const v1::JobRecord&)>& add) {
  auto archived = archive.Scan(after_id, filter, limit, archive_budget);
  if (!archived.ok()) return archived.status();
  // When the archive scan ended early, this page covers the ids up to where it stopped only,
  // so that the next page misses no archived job below a hot one.
  const uint64_t bound = archived->stopped_at != 0 ? archived->stopped_at : UINT64_MAX;
  const std::vector<uint64_t>& ids = archived->ids;
  size_t next_archived = 0;
  auto hot = jobs.jobs().upper_bound(after_id);
  auto next_hot = [&] {
    while (hot != jobs.jobs().end() && hot->first <= bound && !filter.Matches(hot->second)) ++hot;
    return hot != jobs.jobs().end() && hot->first <= bound;
  };
  uint64_t last = after_id;
  size_t added = 0;
  while (added < limit) {
    const bool has_hot = next_hot();
    const bool has_archived = next_archived < ids.size();
    if (!has_hot && !has_archived) break;
    const v1::JobRecord* job = nullptr;
    std::optional<v1::JobRecord> loaded;
    if (has_hot && (!has_archived || hot->first <= ids[next_archived])) {
      // A job on its way to the archive can be in both: once is enough.
      if (has_archived && hot->first == ids[next_archived]) ++next_archived;
      job = &hot->second;
      ++hot;
    } else {
      auto found = archive.Find(ids[next_archived++]);
      if (!found.ok()) return found.status();
      if (!*found) continue;
      loaded = std::move(*found);
      job = &*loaded;
    }
    ++added;
    last = job->id();
    if (!add(*job)) return JobListEnd{true, last};
  }
  if (added == limit) return JobListEnd{true, last};
  if (bound != UINT64_MAX) return JobListEnd{true, bound};
  return JobListEnd{false, last};
}

}  // namespace snn
