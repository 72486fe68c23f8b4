#include "master/sched/scheduler_views.h"

#include <algorithm>
#include <ctime>

#include "common/base/rect_allocator.h"
#include "master/sched/dependency_kinds.h"

namespace snn {

bool IsTaskActive(v1::TaskState state) {
  return state == v1::TASK_LAUNCHING || state == v1::TASK_RUNNING;
}

void SchedulerViews::SetQueuePriorities(std::map<std::string, int32_t> priorities) {
  if (priorities == queue_priority_) return;
  queue_priority_ = std::move(priorities);
  for (auto& [id, e] : views_) {
    auto q = queue_priority_.find(e.job.queue);
    e.job.tier.first = q == queue_priority_.end() ? 0 : q->second;
  }
}

namespace {

// "waiting for job 3 to complete (after_ok); jobs 4, 5 to end (after_any)": the pending ones,
// by kind, at most 8 named per kind.
std::string DependencyWaitWords(const v1::JobRecord& record) {
  std::string words;
  for (DependencyKind kind :
       {DependencyKind::kAfterOk, DependencyKind::kAfterAny, DependencyKind::kAfterNotOk}) {
    std::string ids;
    int count = 0;
    for (uint64_t id : record.deps_pending()) {
      if (DependencyOn(record.spec(), id).value_or(DependencyKind::kAfterOk) != kind) continue;
      if (count++ < 8) ids += (ids.empty() ? " " : ", ") + std::to_string(id);
    }
    if (count == 0) continue;
    if (count > 8) ids += ", ...";
    words += std::string(words.empty() ? "waiting for " : "; ") + (count > 1 ? "jobs" : "job") +
             ids + " to " + DependencyAwaits(kind) + " (" + DependencyName(kind) + ")";
  }
  return words;
}

// "recurring (0 3 * * *): next run at 2026-11-28 03:00 UTC".
std::string RecurringWords(const v1::JobRecord& record) {
  const time_t t = static_cast<time_t>(record.next_run_ms() / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char when[32];
  strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
  return "recurring (" + record.spec().schedule() + "): next run at " + when;
}

}  // namespace

void SchedulerViews::Fill(const v1::JobRecord& record, SchedJob& j) const {
  j.id = record.id();
  j.tenant_job_id = record.tenant_job_id();
  j.pool = record.spec().pool();
  j.tenant = record.tenant();
  j.queue = record.spec().queue();
  j.user = record.spec().user();
  j.resources = &record.spec().task().resources();
  j.licenses = record.spec().licenses().empty() ? nullptr : &record.spec().licenses();
  j.array = record.spec().has_array();
  j.reservation = record.spec().reservation();
  const uint32_t min = std::max(1u, record.spec().min_replicas());
  j.replicas = min;
  j.max_replicas = record.spec().max_replicas() > min ? record.spec().max_replicas() : 0;
  j.submit_ms = record.submit_ms();
  j.time_limit_ms = static_cast<int64_t>(record.spec().time_limit_s()) * 1000;
  j.preemptible = record.spec().preemptible();
  j.interactive = record.spec().kind() == v1::SESSION || record.spec().kind() == v1::SERVICE;
  j.spread = record.spec().spread() == "pack"     ? SchedJob::Spread::kPack
             : record.spec().spread() == "spread" ? SchedJob::Spread::kSpread
                                                  : SchedJob::Spread::kDefault;
  auto q = queue_priority_.find(j.queue);
  j.tier = {q == queue_priority_.end() ? 0 : q->second, record.spec().priority()};
  j.hold.reset();
  if (!record.user_hold().empty()) {
    j.hold =
        std::make_shared<const std::string>("held by " + record.user_hold() + " (snnctl release " +
                                            std::to_string(record.tenant_job_id()) + ")");
  } else if (record.deps_pending_size() > 0) {
    j.hold = std::make_shared<const std::string>(DependencyWaitWords(record));
  } else if (!record.spec().schedule().empty()) {  // it never runs itself: its runs do
    j.hold = std::make_shared<const std::string>(RecurringWords(record));
  }
  j.start_ms = 0;
  j.tasks.clear();
  if (record.state() != v1::RUNNING) return;
  j.start_ms = record.start_ms();
  for (const auto& t : record.tasks()) {
    if (!IsTaskActive(t.state())) continue;
    const auto& r = t.mapping().rect();
    j.tasks.push_back(TaskPlacement{t.node(), t.board(), Rect{r.x(), r.y(), r.width(), r.height()},
                                    t.index(), t.index() >= min});
  }
  if (!j.tasks.empty()) j.replicas = static_cast<uint32_t>(j.tasks.size());
  // No growing while extras are being given back, nor once the job winds down (a task of
  // it ended by itself).
  for (const auto& t : record.tasks()) {
    if (t.given_back() == IsTaskActive(t.state())) j.max_replicas = 0;
  }
}

const std::string* SchedulerViews::Intern(const std::string& name, uint32_t* id) {
  auto it = name_ids_.find(name);
  if (it == name_ids_.end()) {
    name_list_.push_back(std::make_unique<const std::string>(name));
    it = name_ids_.emplace(*name_list_.back(), static_cast<uint32_t>(name_list_.size() - 1)).first;
  }
  if (id != nullptr) *id = it->second;
  return name_list_[it->second].get();
}

const SchedJob& SchedulerViews::Put(const v1::JobRecord& record) {
  Entry& e = views_[record.id()];
  Fill(record, e.job);
  const bool running = record.state() == v1::RUNNING;
  if (running && e.running_slot == SIZE_MAX) {
    e.running_slot = running_.size();
    running_.emplace_back();
  } else if (!running) {
    DropFromRunning(e);
  }
  if (running) {
    RunningJob& r = running_[e.running_slot];
    r = RunningJob::Of(e.job);
    r.pool = Intern(e.job.pool);
    use_.Add(e.job, e.held_cores, -1);  // tenant, queue and pool never change
    e.held_cores = e.job.cores();
    use_.Add(e.job, e.held_cores, 1);
  }
  if (record.state() == v1::PENDING) {
    if (e.pending_slot == SIZE_MAX) {
      e.pending_slot = pending_.size();
      pending_.emplace_back();
    }
    changed_.push_back(record.id());
    PendingEntry& p = pending_[e.pending_slot];
    p.job = PendingJob::Of(e.job);
    p.job.pool = Intern(e.job.pool);
    p.job.board_type = Intern(e.job.resources->board_type());
    p.job.constraints = Intern(e.job.resources->constraints());
    p.job.tenant = Intern(e.job.tenant, &p.tenant);
    p.job.queue = Intern(e.job.queue, &p.queue);
    if (predictor_) p.job.predicted_ms = predictor_(record);
  } else {
    DropFromPending(e);
  }
  return e.job;
}

void SchedulerViews::DropFromRunning(Entry& e) {
  const size_t slot = e.running_slot;
  if (slot == SIZE_MAX) return;
  use_.Add(e.job, e.held_cores, -1);
  e.held_cores = 0;
  running_[slot] = running_.back();  // swap-remove
  running_.pop_back();
  if (slot < running_.size()) views_.find(running_[slot].job->id)->second.running_slot = slot;
  e.running_slot = SIZE_MAX;
}

void SchedulerViews::DropFromPending(Entry& e) {
  const size_t slot = e.pending_slot;
  if (slot == SIZE_MAX) return;
  pending_[slot] = pending_.back();  // swap-remove
  pending_.pop_back();
  if (slot < pending_.size()) views_.find(pending_[slot].job.id)->second.pending_slot = slot;
  e.pending_slot = SIZE_MAX;
}

void SchedulerViews::Remove(uint64_t job_id) {
  auto it = views_.find(job_id);
  if (it == views_.end()) return;
  DropFromRunning(it->second);
  DropFromPending(it->second);
  views_.erase(it);
}

const SchedJob* SchedulerViews::Find(uint64_t job_id) const {
  auto it = views_.find(job_id);
  return it == views_.end() ? nullptr : &it->second.job;
}

size_t SchedulerViews::PendingSlotOf(uint64_t job_id) const {
  auto it = views_.find(job_id);
  return it == views_.end() ? SIZE_MAX : it->second.pending_slot;
}

const PendingJob* SchedulerViews::PendingOf(uint64_t job_id) const {
  auto it = views_.find(job_id);
  if (it == views_.end() || it->second.pending_slot == SIZE_MAX) return nullptr;
  return &pending_[it->second.pending_slot].job;
}

PriorityFactors* SchedulerViews::FactorsOf(uint64_t job_id) {
  auto it = views_.find(job_id);
  if (it == views_.end() || it->second.pending_slot == SIZE_MAX) return nullptr;
  return &pending_[it->second.pending_slot].factors;
}

const PriorityFactors* SchedulerViews::FactorsOf(uint64_t job_id) const {
  auto it = views_.find(job_id);
  if (it == views_.end() || it->second.pending_slot == SIZE_MAX) return nullptr;
  return &pending_[it->second.pending_slot].factors;
}

}  // namespace snn
