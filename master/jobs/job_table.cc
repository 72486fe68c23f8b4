#include "master/jobs/job_table.h"

#include <algorithm>

#include "common/base/array_spec.h"
#include "common/base/job_validation.h"
#include "master/jobs/job_arrays.h"

namespace snn {

bool IsTerminal(v1::JobState state) { return IsTerminalState(state); }

bool IsArchivable(const v1::JobRecord& job) {
  if (!IsTerminal(job.state())) return false;
  for (const auto& t : job.tasks()) {
    if (IsTaskActive(t.state())) return false;
  }
  return true;
}

void JobTable::IndexNodes(const v1::JobRecord& job) {
  std::vector<std::string> now;
  for (const auto& t : job.tasks()) {
    if (IsTaskActive(t.state()) && std::find(now.begin(), now.end(), t.node()) == now.end()) {
      now.push_back(t.node());
    }
  }
  auto it = nodes_of_.find(job.id());
  if (it == nodes_of_.end() && now.empty()) return;
  if (it != nodes_of_.end()) {
    if (it->second == now) return;
    for (const auto& node : it->second) {
      auto on = active_on_.find(node);
      on->second.erase(job.id());
      if (on->second.empty()) active_on_.erase(on);
    }
  }
  for (const auto& node : now) active_on_[node].insert(job.id());
  if (now.empty()) {
    nodes_of_.erase(job.id());
  } else {
    nodes_of_[job.id()] = std::move(now);
  }
}

const std::set<uint64_t>& JobTable::JobsActiveOn(const std::string& node) const {
  static const std::set<uint64_t> kNone;
  auto it = active_on_.find(node);
  return it == active_on_.end() ? kNone : it->second;
}

void JobTable::Index(v1::JobRecord& job, int64_t at_ms) {
  IndexNodes(job);
  ++counts_[job.state()];
  submitted_.Count(job, 1);
  if (job.array_parent() != 0 && !IsTerminal(job.state())) ++array_active_[job.array_parent()];
  if (ArrayExhausted(job)) return;  // its elements are the jobs to schedule
  // A step runs on its session's resources: the scheduler neither places nor charges it.
  if (!HoldsItsCores(job.spec())) return;
  if (job.state() == v1::RUNNING) {
    core_time_.Start(job.tenant(), views_.Put(job).cores(), at_ms);
  }
  if (job.state() == v1::PENDING) views_.Put(job);
}

void JobTable::Unindex(const v1::JobRecord& job, int64_t at_ms) {
  --counts_[job.state()];
  submitted_.Count(job, -1);
  if (job.array_parent() != 0 && !IsTerminal(job.state())) {
    if (auto it = array_active_.find(job.array_parent()); it != array_active_.end()) {
      if (--it->second == 0) array_active_.erase(it);
    }
  }
  if (const SchedJob* view = views_.Find(job.id())) {
    if (job.state() == v1::RUNNING) core_time_.Stop(job.tenant(), view->cores(), at_ms);
    views_.Remove(job.id());
  }
}

void JobTable::Restore(v1::JobRecord job) {
  next_job_id_ = std::max(next_job_id_, job.id() + 1);
  uint64_t& next_tenant = next_tenant_id_[job.tenant()];
  next_tenant = std::max(next_tenant, LastTenantJobId(job) + 1);
  by_tenant_[{job.tenant(), job.tenant_job_id()}] = job.id();
  v1::JobRecord& stored = jobs_[job.id()] = std::move(job);
  Index(stored, stored.start_ms());
}

uint64_t JobTable::NextTenantJobId(const std::string& tenant) {
  uint64_t& next = next_tenant_id_[tenant];
  if (next == 0) next = 1;
  return next++;
}

v1::JobRecord& JobTable::Insert(v1::JobRecord job) {
  job.set_state(v1::PENDING);
  by_tenant_[{job.tenant(), job.tenant_job_id()}] = job.id();
  const uint64_t id = job.id();
  v1::JobRecord& stored = jobs_[id] = std::move(job);
  Index(stored, stored.submit_ms());
  return stored;
}

v1::TaskRecord& JobTable::AddTask(v1::JobRecord& job) {
  v1::TaskRecord& task = *job.add_tasks();
  task.set_index(static_cast<uint32_t>(job.tasks_size() - 1));
  task.set_attempt(job.attempt());
  task.set_state(v1::TASK_LAUNCHING);
  return task;
}

v1::JobRecord* JobTable::Find(uint64_t job_id) {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : &it->second;
}

const v1::JobRecord* JobTable::Find(uint64_t job_id) const {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : &it->second;
}

v1::JobRecord* JobTable::FindByTenant(const std::string& tenant, uint64_t tenant_job_id) {
  auto it = by_tenant_.find({tenant, tenant_job_id});
  return it == by_tenant_.end() ? nullptr : Find(it->second);
}

JobTable::JobTable() {
  // A pending job is expected to run as its user's last two jobs did (the slowdown factor).
  views_.SetRunTimePredictor([this](const v1::JobRecord& job) {
    return PredictRunMs(job.spec().user(), static_cast<int64_t>(job.spec().time_limit_s()) * 1000);
  });
}

void JobTable::SetState(v1::JobRecord& job, v1::JobState to, int64_t now_ms,
                        const std::string& reason) {
  Unindex(job, now_ms);
  // Only batch jobs say how long a user's next job runs: a session is held as long as its
  // client likes, and a session's steps (seconds each) would make every job look short.
  const bool ran = job.state() == v1::RUNNING && job.spec().kind() == v1::BATCH;
  auto* t = job.add_history();
  t->set_time_ms(now_ms);
  t->set_from(job.state());
  t->set_to(to);
  t->set_reason(reason);
  job.set_state(to);
  job.set_reason(reason);
  if (to == v1::RUNNING) job.set_start_ms(now_ms);
  const bool ended = IsTerminal(to) && !IsTerminal(t->from());
  if (IsTerminal(to)) {
    job.set_end_ms(now_ms);
    if (ran) run_times_[job.spec().user()].Record(now_ms - job.start_ms());
  }
  Index(job, now_ms);
  if (ended && job.array_parent() != 0) {
    v1::JobRecord* array = Find(job.array_parent());
    if (array != nullptr && !IsTerminal(array->state())) {
      CountElementEnd(*array, to);
      ArrayChanged(*array, now_ms);
    }
  }
}

void JobTable::ArrayChanged(v1::JobRecord& array, int64_t now_ms) {
  if (array.state() != v1::PENDING) return;
  submitted_.ArrayChanged(array);
  if (auto end = ArrayEnd(array, ArrayActive(array.id()))) {
    const uint32_t n = array.array_completed() + array.array_failed() + array.array_cancelled();
    SetState(array, *end, now_ms,
             "its " + std::to_string(n) +
                 " elements ended: " + std::to_string(array.array_completed()) + " completed, " +
                 std::to_string(array.array_failed()) + " failed, " +
                 std::to_string(array.array_cancelled()) + " cancelled");
    return;
  }
  if (ArrayExhausted(array)) {
    views_.Remove(array.id());
    array.set_reason(std::to_string(ArrayActive(array.id())) + " of its elements run" +
                     (array.array_held_size() > 0 ? "; the others are held" : ""));
  } else {
    views_.Put(array);
  }
}

const RuntimeHistory* JobTable::RunTimesOf(const std::string& user) const {
  auto it = run_times_.find(user);
  return it == run_times_.end() ? nullptr : &it->second;
}

int64_t JobTable::PredictRunMs(const std::string& user, int64_t limit_ms) const {
  const RuntimeHistory* history = RunTimesOf(user);
  return history == nullptr || limit_ms <= 0 ? 0 : history->Predict(limit_ms);
}

void JobTable::TasksChanged(const v1::JobRecord& job, int64_t now_ms) {
  IndexNodes(job);
  const SchedJob* view = views_.Find(job.id());
  if (view == nullptr || job.state() != v1::RUNNING) return;
  core_time_.Stop(job.tenant(), view->cores(), now_ms);
  core_time_.Start(job.tenant(), views_.Put(job).cores(), now_ms);
}

void JobTable::MarkArchived(const v1::JobRecord& job) {
  if (!archived_.insert(job.id()).second) return;
  --counts_[job.state()];
}

void JobTable::Drop(uint64_t job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || archived_.erase(job_id) == 0) return;
  by_tenant_.erase({it->second.tenant(), it->second.tenant_job_id()});
  jobs_.erase(it);
}

void JobTable::ReserveIds(const v1::ArchiveStats& archived) {
  next_job_id_ = std::max(next_job_id_, archived.max_job_id() + 1);
  for (const auto& [tenant, max] : archived.max_tenant_job_id()) {
    uint64_t& next = next_tenant_id_[tenant];
    next = std::max(next, max + 1);
  }
}

uint64_t JobTable::CountInState(v1::JobState state) const {
  auto it = counts_.find(state);
  return it == counts_.end() ? 0 : it->second;
}

}  // namespace snn
