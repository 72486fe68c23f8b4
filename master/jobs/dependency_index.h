// Dependencies between a tenant's jobs (after_ok, after_any, after_not_ok: dependency_kinds.h).
// A dependent job waits (its SchedJob's hold says why) until every job it names has ended as
// its kind asks; one that ends otherwise cancels it with the reason, and so on down the chain. An
// index from each awaited job to its dependents makes an ending job settle them at once, without a
// pass looking at any job it does not concern. Hooked into JobWriter: every job written in a
// terminal state settles its dependents.
// after_corr (dependency_index_corr.cc): element N of an array waits for element N of another;
// each element's end settles the index it stands for (JobRecord.array_corr_settled), started or
// not, and the scheduler starts only settled indices (ArrayStartable).
// Thread contract: only on the master's io thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/base/array_spec.h"
#include "common/base/clock.h"
#include "master/jobs/job_archive.h"
#include "master/jobs/job_table.h"
#include "master/jobs/job_writer.h"
#include "master/store/journal.h"

namespace snn {

class DependencyIndex {
 public:
  // `request_schedule` is called when a dependent job may start.
  DependencyIndex(JobTable& jobs, JobArchive& archive, Journal& journal, JobWriter& writer,
                  const Clock& clock, std::function<void()> request_schedule);

  // Checks a new job's dependencies (each named job exists, once; none ended in a way that can
  // never meet it) and notes in it those not ended yet; a singleton gets its after_any first.
  // Before the job is given an id.
  Status Check(v1::JobRecord& job);
  // Indexes an inserted job's pending dependencies.
  void Index(const v1::JobRecord& job);
  // Rebuilds the index from the loaded jobs, settling what ended meanwhile (after loading the
  // store; commit after).
  void Recover();
  // Elements of `array` that never started were cancelled (snnctl cancel 7_[5-9]): what waits on
  // them element by element (after_corr) is settled.
  void ElementsCancelled(const v1::JobRecord& array, const ArrayRanges& indices);

 private:
  // A job, or some elements of an array, ended.
  struct Ending {
    std::string tenant;
    uint64_t job = 0;  // the tenant's job ID (of the array, for elements)
    v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
    bool array = false;    // `job` is an array (its end settles what its elements did not)
    ArrayRanges elements;  // non-empty: these elements of array `job` ended, in `state`
  };
  // Settles what waits on `ending`, then on what that ended in turn, and so on.
  void Settle(Ending ending);
  // A job ended: its dependents (after_ok, after_any, after_not_ok), and if it is an array,
  // the corresponding elements its elements never settled.
  void SettleJob(const Ending& ended);
  // The array `awaited` ended in `state`: the corresponding elements of the arrays waiting on
  // it that its elements have not settled (those that never started) are.
  void SettleArrayEnd(const std::pair<std::string, uint64_t>& awaited, v1::JobState state);
  // Elements of an array ended: the corresponding elements of the arrays waiting on it.
  void SettleElements(const Ending& ended);
  // The state of element `index` of the array `awaited`: as its record says, live or archived;
  // if it has not started, PENDING, or CANCELLED once the array has ended (it never will).
  v1::JobState ElementState(const v1::JobRecord& awaited, uint32_t index);
  // The job `tenant_job_id` of `tenant`, live or archived (none: no such job, or the archive
  // cannot be read).
  std::optional<v1::JobRecord> FindJob(const std::string& tenant, uint64_t tenant_job_id);
  // Settles `runs` (step-1 runs of `array`'s indices, each up to the next index) as the
  // corresponding elements ended in `state`: they may start, or are cancelled with `reason`.
  void SettleRuns(v1::JobRecord& array, const ArrayRanges& runs, v1::JobState state,
                  const std::string& reason);
  // An array's after_corr at submit: the awaited array's indices include all of its, and what
  // has ended of it is noted in array_corr_settled (or refused, if one ended other than
  // COMPLETED).
  Status CheckCorr(v1::JobRecord& job);
  // Indexes `job`'s after_corr while the awaited array is live.
  void IndexCorr(const v1::JobRecord& job);
  // Indexes the loaded arrays' after_corr, settling those whose awaited array ended meanwhile.
  void RecoverCorr();

  // A singleton's after_any: the live jobs of its tenant, user and name (from the last
  // singleton among them).
  Status AddSingleton(v1::JobRecord& job);
  // `ended` reached a terminal state: its dependents go on, or are cancelled (transitively).

  // Constant after construction.
  JobTable& jobs_;
  JobArchive& archive_;
  Journal& journal_;
  JobWriter& writer_;
  const Clock& clock_;
  const std::function<void()> request_schedule_;
  // (tenant, tenant job ID) awaited -> the global IDs of the jobs waiting on it.
  std::map<std::pair<std::string, uint64_t>, std::vector<uint64_t>> dependents_;
  // (tenant, array's tenant job ID) awaited -> the global IDs of the arrays waiting on its
  // elements (after_corr).
  std::map<std::pair<std::string, uint64_t>, std::vector<uint64_t>> corr_dependents_;
  // What ended while Settle runs: it settles them in turn.
  std::deque<Ending> endings_;
  bool settling_ = false;
};

}  // namespace snn
