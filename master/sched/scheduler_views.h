// Each pending and running job as the scheduler sees it (a SchedJob), kept alongside the job
// table so that a pass does not rebuild hundreds of thousands of them: built when a job becomes
// pending or running, rebuilt when a running job's tasks change, dropped when it leaves. A
// running job's view holds its active tasks, and counts them as its replicas. The first half
// of a job's tier, its queue's priority, comes from the policy in force and is re-applied to
// every view when that changes.
// Thread contract: the master's io thread.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "master/sched/priority.h"
#include "master/sched/scheduler.h"
#include "proto/job.pb.h"

namespace snn {

bool IsTaskActive(v1::TaskState state);

// A pending job in its pool's index (JobTable::pending()), ordered by (priority, id).
struct PendingKey {
  int64_t neg_priority;
  uint64_t job_id;
  // Not part of the order: the job's scheduler view at a glance (summary->job is the view),
  // and where a pass leaves the job's priority factors for display.
  const PendingJob* summary = nullptr;
  PriorityFactors* factors = nullptr;
  auto operator<=>(const PendingKey& o) const {
    return std::tie(neg_priority, job_id) <=> std::tie(o.neg_priority, o.job_id);
  }
  bool operator==(const PendingKey& o) const { return job_id == o.job_id; }
};
using PendingQueue = std::set<PendingKey>;

class SchedulerViews {
 public:
  void SetQueuePriorities(std::map<std::string, int32_t> priorities);

  // (Re)builds the view of a pending or running job; it points into `job`, which must stay put.
  const SchedJob& Put(const v1::JobRecord& job);
  void Remove(uint64_t job_id);

  const SchedJob* Find(uint64_t job_id) const;
  // A pending job at a glance (null: not pending).
  const PendingJob* PendingOf(uint64_t job_id) const;
  // A pending job's priority factors as the last pass worked them out (null: no view).
  PriorityFactors* FactorsOf(uint64_t job_id);
  const PriorityFactors* FactorsOf(uint64_t job_id) const;
  // The running jobs, in no particular order.
  const std::vector<RunningJob>& running() const { return running_; }

 private:
  struct Entry {
    SchedJob job;
    size_t running_slot = SIZE_MAX;
    PriorityFactors factors;
    PendingJob pending;  // pending jobs; the pool and board type point into names_
  };
  void Fill(const v1::JobRecord& record, SchedJob& job) const;
  void DropFromRunning(Entry& e);

  std::map<std::string, int32_t> queue_priority_;
  std::unordered_map<uint64_t, Entry> views_;
  std::vector<RunningJob> running_;
  std::set<std::string> names_;  // pool and board type names: one pointer per name
};

}  // namespace snn
