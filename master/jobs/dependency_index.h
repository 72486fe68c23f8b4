// Dependencies between a tenant's jobs (after_ok, after_any, after_not_ok: dependency_kinds.h).
// A dependent job waits (its SchedJob's hold says why) until every job it names has ended as
// its kind asks; one that ends otherwise cancels it with the reason, and so on down the chain. An
// index from each awaited job to its dependents makes an ending job settle them at once, without a
// pass looking at any job it does not concern. Hooked into JobWriter: every job written in a
// terminal state settles its dependents. Thread contract: only on the master's io thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

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

 private:
  // A singleton's after_any: the live jobs of its tenant, user and name (from the last
  // singleton among them).
  Status AddSingleton(v1::JobRecord& job);
  // `ended` reached a terminal state: its dependents go on, or are cancelled (transitively).
  void Settle(const v1::JobRecord& ended);

  // Constant after construction.
  JobTable& jobs_;
  JobArchive& archive_;
  Journal& journal_;
  JobWriter& writer_;
  const Clock& clock_;
  const std::function<void()> request_schedule_;
  // (tenant, tenant job ID) awaited -> the global IDs of the jobs waiting on it.
  std::map<std::pair<std::string, uint64_t>, std::vector<uint64_t>> dependents_;
  bool settling_ = false;  // the jobs Settle cancels settle nothing themselves: its loop does
};

}  // namespace snn
