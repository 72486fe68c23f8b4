#include "master/jobs/job_writer.h"

#include <vector>

namespace snn {

void JobWriter::Persist(const v1::JobRecord& job) {
  // An element's end is heard before its array's, which it may have ended: what waits on the
  // element (after_corr) learns how it ended from it, not from the array.
  if (IsTerminal(job.state()) && on_ended_) on_ended_(job);
  if (IsTerminal(job.state()) && job.array_parent() != 0) {
    // Its end was counted into its array (JobTable::SetState), which may have ended with it.
    if (const v1::JobRecord* array = jobs_.Find(job.array_parent())) Persist(*array);
  }
  if (on_persisted_) on_persisted_(job);
  if (!IsArchivable(job)) {
    journal_.PutJob(job);
    return;
  }
  // Nothing changes a job that has ended with no task running, so one move is enough.
  if (jobs_.IsArchived(job.id())) return;
  archive_.Add(job, journal_);
  jobs_.MarkArchived(job);
  journal_.Defer([this, id = job.id()] { jobs_.Drop(id); });
}

size_t JobWriter::ArchiveFinishedJobs() {
  std::vector<const v1::JobRecord*> finished;
  for (const auto& [id, job] : jobs_.jobs()) {
    if (IsArchivable(job) && !jobs_.IsArchived(id)) finished.push_back(&job);
  }
  for (const v1::JobRecord* job : finished) Persist(*job);
  return finished.size();
}

}  // namespace snn
