// The master's in-memory index of every job, rebuilt from the store at start: by global id, by
// (tenant, tenant job id), and the scheduler's views of the pending and running jobs (the
// order of the pending ones is QueueOrder's to work out each pass, with fair share and age).
// The one writer of job and task state: a job's state changes only through SetState (which
// records the transition and keeps the indexes right), a task's only through AddTask and
// SetTaskState (tests/house/state_writers_test.py holds the rest of master/ to that). Thread
// contract: only on the master's io thread. Pure data: no I/O, no clock.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "master/jobs/submitted_counts.h"
#include "master/sched/core_time.h"
#include "master/sched/runtime_prediction.h"
#include "master/sched/scheduler_views.h"
#include "proto/job.pb.h"

namespace snn {

bool IsTerminal(v1::JobState state);
// Whether a job holds the cores its tasks run on (reserved at start, released at their end): a
// step runs on its session's.
inline bool HoldsItsCores(const v1::JobSpec& spec) { return spec.kind() != v1::STEP; }
// Whether agents run a job's tasks: a session's are held in the master, for its steps.
inline bool RunsOnAgents(const v1::JobSpec& spec) {
  return spec.kind() != v1::SESSION && spec.kind() != v1::SERVICE;
}
// What a kind is called in messages: "batch job", "session", "step", "service".
inline const char* KindName(v1::JobKind kind) {
  switch (kind) {
    case v1::SESSION:
      return "session";
    case v1::STEP:
      return "step";
    case v1::SERVICE:
      return "service";
    default:
      return "batch job";
  }
}
// Ended, with no task launching or running: nothing will change the job any more.
bool IsArchivable(const v1::JobRecord& job);

class JobTable {
 public:
  JobTable();

  // Adds a job read back from the store (any state).
  void Restore(v1::JobRecord job);

  // Reserves the next global id and the next id in `tenant`'s namespace.
  uint64_t NextJobId() { return next_job_id_++; }
  uint64_t NextTenantJobId(const std::string& tenant);
  // The next `count` ids in `tenant`'s namespace are taken (an array's elements').
  void SkipTenantJobIds(const std::string& tenant, uint64_t count) {
    next_tenant_id_[tenant] += count;
  }

  // Adds a new job, PENDING.
  v1::JobRecord& Insert(v1::JobRecord job);

  v1::JobRecord* Find(uint64_t job_id);
  const v1::JobRecord* Find(uint64_t job_id) const;
  v1::JobRecord* FindByTenant(const std::string& tenant, uint64_t tenant_job_id);

  // Moves `job` to `to`, recording the transition (time, reason) and keeping indexes right.
  void SetState(v1::JobRecord& job, v1::JobState to, int64_t now_ms, const std::string& reason);
  // A new task of `job`'s current attempt, next in index, LAUNCHING (the caller says where, and
  // calls TasksChanged once its tasks are all there).
  v1::TaskRecord& AddTask(v1::JobRecord& job);
  // A task's state as its agent (or the master, for what it settles itself) says it is now.
  void SetTaskState(v1::TaskRecord& task, v1::TaskState to) { task.set_state(to); }

  const std::map<uint64_t, v1::JobRecord>& jobs() const { return jobs_; }
  // Pending and running jobs as the scheduler sees them (a pass orders the pending ones and
  // leaves their priority factors there).
  const SchedulerViews& views() const { return views_; }
  SchedulerViews& views() { return views_; }
  void SetQueuePriorities(std::map<std::string, int32_t> p) {
    views_.SetQueuePriorities(std::move(p));
  }
  // A job's tasks changed (one ended, moved, was added or given back) at `now_ms`.
  void TasksChanged(const v1::JobRecord& job, int64_t now_ms);
  // The jobs with a task launching or running on `node`, whatever the job's state (a
  // cancelled job's tasks run until they are killed): what a node's registration or loss
  // concerns, found without looking at every job.
  const std::set<uint64_t>& JobsActiveOn(const std::string& node) const;
  // Core-milliseconds each tenant's running jobs used since the last call, up to `now_ms`.
  std::map<std::string, double> TakeCoreTime(int64_t now_ms) { return core_time_.Take(now_ms); }
  // How long `user`'s last batch jobs ran (those that ended after running, since the master
  // started): run-time predictions for the slowdown factor and the start forecast. Null: none.
  const RuntimeHistory* RunTimesOf(const std::string& user) const;
  // How long a job of `user` with this limit is expected to run by that history; 0: no
  // history (its limit, for the caller).
  int64_t PredictRunMs(const std::string& user, int64_t limit_ms) const;
  // Hot jobs in `state` (jobs on their way to the archive are the archive's to count).
  uint64_t CountInState(v1::JobState state) const;
  // Jobs pending or running of each user and tenant: what the policy's max_submitted limits.
  const SubmittedCounts& submitted() const { return submitted_; }

  // An array's elements not ended (%K counts them).
  uint32_t ArrayActive(uint64_t array_id) const {
    auto it = array_active_.find(array_id);
    return it == array_active_.end() ? 0 : it->second;
  }
  // `array`'s indices changed (an element split off, a slice cancelled, held or released): the
  // scheduler sees it while it has indices left, and it ends once every element has.
  void ArrayChanged(v1::JobRecord& array, int64_t now_ms);

  // Finished jobs leave for the archive in two steps: marked when the move is written, dropped
  // from memory once it is durable (until then they are still found here).
  void MarkArchived(const v1::JobRecord& job);
  bool IsArchived(uint64_t job_id) const { return archived_.count(job_id) > 0; }
  void Drop(uint64_t job_id);
  // Ids above everything the archive gave out, so none is given out twice.
  void ReserveIds(const v1::ArchiveStats& archived);

 private:
  // `at_ms`: when a running job starts or stops being charged.
  void Index(v1::JobRecord& job, int64_t at_ms);
  void Unindex(const v1::JobRecord& job, int64_t at_ms);
  // Brings the job's entries in active_on_ in line with its tasks.
  void IndexNodes(const v1::JobRecord& job);

  std::map<uint64_t, v1::JobRecord> jobs_;
  std::map<std::pair<std::string, uint64_t>, uint64_t> by_tenant_;
  std::unordered_map<std::string, uint64_t> next_tenant_id_;
  SchedulerViews views_;
  CoreTimeAccrual core_time_;
  std::map<v1::JobState, uint64_t> counts_;
  SubmittedCounts submitted_;
  std::unordered_map<std::string, std::set<uint64_t>> active_on_;    // node -> jobs
  std::unordered_map<uint64_t, std::vector<std::string>> nodes_of_;  // job -> those nodes
  std::unordered_set<uint64_t> archived_;
  std::unordered_map<uint64_t, uint32_t> array_active_;        // array -> elements not ended
  std::unordered_map<std::string, RuntimeHistory> run_times_;  // by user
  uint64_t next_job_id_ = 1;
};

}  // namespace snn
