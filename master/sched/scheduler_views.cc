#include "master/sched/scheduler_views.h"

#include <algorithm>

#include "common/rect_allocator.h"

namespace snn {

void SchedulerViews::SetQueuePriorities(std::map<std::string, int32_t> priorities) {
  if (priorities == queue_priority_) return;
  queue_priority_ = std::move(priorities);
  for (auto& [id, e] : views_) {
    auto q = queue_priority_.find(e.job.queue);
    e.job.tier.first = q == queue_priority_.end() ? 0 : q->second;
  }
}

void SchedulerViews::Fill(const v1::JobRecord& record, SchedJob& j) const {
  j.id = record.id();
  j.pool = record.spec().pool();
  j.tenant = record.tenant();
  j.queue = record.spec().queue();
  j.resources = &record.spec().task().resources();
  const uint32_t min = std::max(1u, record.spec().min_replicas());
  j.replicas = min;
  j.max_replicas = record.spec().max_replicas() > min ? record.spec().max_replicas() : 0;
  j.submit_ms = record.submit_ms();
  j.time_limit_ms = static_cast<int64_t>(record.spec().time_limit_s()) * 1000;
  j.preemptible = record.spec().preemptible();
  auto q = queue_priority_.find(j.queue);
  j.tier = {q == queue_priority_.end() ? 0 : q->second, record.spec().priority()};
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
    r.pool = &*names_.insert(e.job.pool).first;
  }
  e.pending = PendingJob();
  if (record.state() == v1::PENDING) {
    e.pending = PendingJob::Of(e.job);
    e.pending.pool = &*names_.insert(e.job.pool).first;
    e.pending.board_type = &*names_.insert(e.job.resources->board_type()).first;
  }
  return e.job;
}

void SchedulerViews::DropFromRunning(Entry& e) {
  const size_t slot = e.running_slot;
  if (slot == SIZE_MAX) return;
  running_[slot] = running_.back();  // swap-remove
  running_.pop_back();
  if (slot < running_.size()) views_.find(running_[slot].job->id)->second.running_slot = slot;
  e.running_slot = SIZE_MAX;
}

void SchedulerViews::Remove(uint64_t job_id) {
  auto it = views_.find(job_id);
  if (it == views_.end()) return;
  DropFromRunning(it->second);
  views_.erase(it);
}

const SchedJob* SchedulerViews::Find(uint64_t job_id) const {
  auto it = views_.find(job_id);
  return it == views_.end() ? nullptr : &it->second.job;
}

const PendingJob* SchedulerViews::PendingOf(uint64_t job_id) const {
  auto it = views_.find(job_id);
  return it == views_.end() || it->second.pending.job == nullptr ? nullptr : &it->second.pending;
}

PriorityFactors* SchedulerViews::FactorsOf(uint64_t job_id) {
  auto it = views_.find(job_id);
  return it == views_.end() ? nullptr : &it->second.factors;
}

const PriorityFactors* SchedulerViews::FactorsOf(uint64_t job_id) const {
  auto it = views_.find(job_id);
  return it == views_.end() ? nullptr : &it->second.factors;
}

}  // namespace snn
