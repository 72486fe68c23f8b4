// Writes a job's record where it belongs once changed: to the journal while the job may still
// change, or into the archive once it has ended with no task left running (it then leaves
// memory when that is durable). Whoever must hear of a job's end (the dependency index) hooks
// in here, so that no change of state skips it.
// Thread contract: only on the master's io thread.
#pragma once

#include <functional>

#include "master/jobs/job_archive.h"
#include "master/jobs/job_table.h"
#include "master/store/journal.h"

namespace snn {

class JobWriter {
 public:
  JobWriter(JobTable& jobs, JobArchive& archive, Journal& journal)
      : jobs_(jobs), archive_(archive), journal_(journal) {}

  // Writes `job`'s record (the caller commits the journal).
  void Persist(const v1::JobRecord& job);
  // Moves to the archive every loaded job that has ended with no task running (a store written
  // before the archive existed keeps them with the hot jobs). Returns how many; commit after.
  size_t ArchiveFinishedJobs();
  // Called with every job Persist writes (the HTTP API's events), before it is written.
  void set_on_persisted(std::function<void(const v1::JobRecord&)> on_persisted) {
    on_persisted_ = std::move(on_persisted);
  }
  // Called with every job Persist sees in a terminal state, before it is written.
  void set_on_ended(std::function<void(const v1::JobRecord&)> on_ended) {
    on_ended_ = std::move(on_ended);
  }

 private:
  // Constant after construction.
  JobTable& jobs_;
  JobArchive& archive_;
  Journal& journal_;
  std::function<void(const v1::JobRecord&)> on_ended_;
  std::function<void(const v1::JobRecord&)> on_persisted_;
};

}  // namespace snn
