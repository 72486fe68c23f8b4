// Finished jobs, out of the hot state. A job that has ended and has no task left running moves
// to the archive: its record, a small summary to filter on, and a tenant index entry live in the
// store only, so the master's memory does not grow with the jobs it has seen. In memory the
// archive keeps its totals (ArchiveStats: jobs per state, the highest ids given out), which a
// restart reads as one record instead of the whole archive.
// Thread contract: only on the master's io thread. Reads go to the store on that thread, and
// each listing request looks at a bounded number of summaries.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "master/store/journal.h"
#include "master/store/store.h"
#include "proto/job.pb.h"

namespace snn {

// What `snnctl jobs` filters on. Empty or zero fields do not filter.
struct JobFilter {
  std::string tenant;  // empty: every tenant
  std::string user;
  std::vector<v1::JobState> states;
  int64_t since_ms = 0;  // not ended before
  int64_t until_ms = 0;  // submitted before
  bool Matches(const std::string& tenant, const std::string& user, v1::JobState state,
               int64_t submit_ms, int64_t end_ms) const;
  bool Matches(const v1::JobRecord& job) const;
};

class JobArchive {
 public:
  explicit JobArchive(Store& store) : store_(store) {}

  // Reads the totals (at start).
  Status Load();

  // Counts `job` (ended, no task active) into the totals and writes its move to the archive to
  // `journal`'s batch.
  void Add(const v1::JobRecord& job, Journal& journal);

  Result<std::optional<v1::JobRecord>> Find(uint64_t job_id);
  Result<std::optional<v1::JobRecord>> FindByTenant(const std::string& tenant,
                                                    uint64_t tenant_job_id);

  // Looks at archived jobs with ids above `after_id`, in id order, and collects the ids of those
  // that match, until `limit` match or `budget` summaries were looked at.
  struct Page {
    std::vector<uint64_t> ids;
    // The last id looked at when the page ended early (limit or budget), 0 when the archive
    // had nothing more.
    uint64_t stopped_at = 0;
  };
  Result<Page> Scan(uint64_t after_id, const JobFilter& filter, size_t limit, size_t budget);

  uint64_t Count(v1::JobState state) const;
  const v1::ArchiveStats& stats() const { return stats_; }

 private:
  Store& store_;
  v1::ArchiveStats stats_;
};

}  // namespace snn
