// Each pending and running job as the scheduler sees it (a SchedJob), kept alongside the job
// table so that a pass does not rebuild hundreds of thousands of them: built when a job becomes
// pending or running, rebuilt when a running job's tasks change, dropped when it leaves. A
// running job's view holds its active tasks, and counts them as its replicas. The first half
// of a job's tier, its queue's priority, comes from the policy in force and is re-applied to
// every view when that changes. Pending jobs are also kept in one flat array for the pass to order.
// Thread contract: the master's io thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "master/sched/priority.h"
#include "master/sched/scheduler_types.h"
#include "proto/job.pb.h"

namespace snn {

bool IsTaskActive(v1::TaskState state);

// A pending job as a pass orders it, in one contiguous array: a pass over 100,000 pending jobs
// reads them in a row instead of chasing a node per job.
struct PendingEntry {
  PendingJob job;                  // the pass's copy; its pool and board type are interned
  uint32_t tenant = 0, queue = 0;  // interned names (SchedulerViews::Name)
  PriorityFactors factors;         // as the last pass worked them out
};

class SchedulerViews {
 public:
  void SetQueuePriorities(std::map<std::string, int32_t> priorities);
  // A pending job's predicted run time (PendingJob::predicted_ms), worked out when its view is
  // (re)built; unset: none.
  void SetRunTimePredictor(std::function<int64_t(const v1::JobRecord&)> predictor) {
    predictor_ = std::move(predictor);
  }

  // (Re)builds the view of a pending or running job; it points into `job`, which must stay put.
  const SchedJob& Put(const v1::JobRecord& job);
  void Remove(uint64_t job_id);

  const SchedJob* Find(uint64_t job_id) const;
  // A pending job at a glance (null: not pending). Valid until the views change.
  const PendingJob* PendingOf(uint64_t job_id) const;
  // Every pending job, in no particular order (the pass's QueueOrder gives one).
  std::span<PendingEntry> pending() { return pending_; }
  std::span<const PendingEntry> pending() const { return pending_; }
  // The slot in pending() of a pending job (SIZE_MAX: not pending).
  size_t PendingSlotOf(uint64_t job_id) const;
  // The jobs that became pending, or changed while pending, since the last call (some may have
  // left the queue since). The queue order ranks them between its full orders.
  std::vector<uint64_t> TakeChanged() { return std::exchange(changed_, {}); }
  // The tenant, queue, pool and board type names jobs use, by number.
  const std::string& Name(uint32_t id) const { return *name_list_[id]; }
  size_t name_count() const { return name_list_.size(); }
  // A pending job's priority factors as the last pass worked them out (null: no view).
  PriorityFactors* FactorsOf(uint64_t job_id);
  const PriorityFactors* FactorsOf(uint64_t job_id) const;
  // The running jobs, in no particular order.
  const std::vector<RunningJob>& running() const { return running_; }
  // The cores they hold per tenant and per queue in each pool, kept as they change.
  const QuotaUse& use() const { return use_; }

 private:
  struct Entry {
    SchedJob job;
    size_t running_slot = SIZE_MAX;
    size_t pending_slot = SIZE_MAX;
    uint64_t held_cores = 0;  // counted in use_ while running
  };
  void Fill(const v1::JobRecord& record, SchedJob& job) const;
  void DropFromRunning(Entry& e);
  void DropFromPending(Entry& e);
  // The one copy of `name`, and its number.
  const std::string* Intern(const std::string& name, uint32_t* id = nullptr);

  std::map<std::string, int32_t> queue_priority_;
  std::function<int64_t(const v1::JobRecord&)> predictor_;
  std::unordered_map<uint64_t, Entry> views_;
  std::vector<RunningJob> running_;
  QuotaUse use_;
  std::vector<PendingEntry> pending_;
  std::vector<uint64_t> changed_;                            // see TakeChanged
  std::unordered_map<std::string_view, uint32_t> name_ids_;  // keys point into name_list_
  std::vector<std::unique_ptr<const std::string>> name_list_;
};

}  // namespace snn
