#include "master/jobs/dependency_index.h"

#include <glog/logging.h>

#include <algorithm>

#include "master/sched/dependency_kinds.h"

namespace snn {

DependencyIndex::DependencyIndex(JobTable& jobs, JobArchive& archive, Journal& journal,
                                 JobWriter& writer, const Clock& clock,
                                 std::function<void()> request_schedule)
    : jobs_(jobs),
      archive_(archive),
      journal_(journal),
      writer_(writer),
      clock_(clock),
      request_schedule_(std::move(request_schedule)) {
  writer_.set_on_ended([this](const v1::JobRecord& job) {
    if (dependents_.empty() && corr_dependents_.empty()) return;
    if (job.array_parent() != 0 && !corr_dependents_.empty()) {
      Ending element{job.tenant(), job.array_job_id(), job.state(), false, {}};
      v1::ArrayRange* r = element.elements.Add();
      r->set_first(job.array_task_id());
      r->set_last(job.array_task_id());
      r->set_step(1);
      Settle(std::move(element));
    }
    Settle({job.tenant(), job.tenant_job_id(), job.state(), job.spec().has_array(), {}});
  });
}

Status DependencyIndex::AddSingleton(v1::JobRecord& job) {
  // Every live job of the same tenant, user and name: the last singleton among them waits for
  // those before it, so it stands for them.
  std::vector<const v1::JobRecord*> live;
  for (const auto& [id, other] : jobs_.jobs()) {
    if (IsTerminal(other.state()) || other.tenant() != job.tenant() ||
        other.spec().user() != job.spec().user() || other.spec().name() != job.spec().name()) {
      continue;
    }
    live.push_back(&other);
  }
  size_t last_singleton = 0;  // index + 1 in `live`
  for (size_t i = 0; i < live.size(); ++i) {
    if (live[i]->spec().singleton()) last_singleton = i + 1;
  }
  for (size_t i = last_singleton == 0 ? 0 : last_singleton - 1; i < live.size(); ++i) {
    const uint64_t id = live[i]->tenant_job_id();
    if (!DependencyOn(job.spec(), id)) job.mutable_spec()->add_after_any(id);
  }
  if (DependenciesOf(job.spec()).size() > 64) {
    return InvalidArgument("singleton: " + std::to_string(live.size()) + " jobs named '" +
                           job.spec().name() +
                           "' are pending or running, and a job waits for at most 64; make "
                           "the earlier ones singletons too, or wait for some to end");
  }
  return Status::Ok();
}

Status DependencyIndex::Check(v1::JobRecord& job) {
  if (job.spec().singleton()) SNN_RETURN_IF_ERROR(AddSingleton(job));
  if (job.spec().after_corr_size() > 0) SNN_RETURN_IF_ERROR(CheckCorr(job));
  const std::vector<Dependency> deps = DependenciesOf(job.spec());
  if (deps.size() > 64) return InvalidArgument("depends: at most 64 jobs in all");
  for (size_t i = 0; i < deps.size(); ++i) {
    const Dependency& d = deps[i];
    const char* kind = DependencyName(d.kind);
    for (size_t k = 0; k < i; ++k) {
      if (deps[k].job == d.job) {
        return InvalidArgument(std::string("depends: job ") + std::to_string(d.job) +
                               " is named twice (" + DependencyName(deps[k].kind) + ", " + kind +
                               "); name it once");
      }
    }
    v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
    if (const v1::JobRecord* dep = jobs_.FindByTenant(job.tenant(), d.job)) {
      state = dep->state();
    } else {
      auto stored = archive_.FindByTenant(job.tenant(), d.job);
      if (!stored.ok()) return stored.status();
      if (!*stored) {
        return InvalidArgument(std::string(kind) + ": tenant " + job.tenant() + " has no job " +
                               std::to_string(d.job));
      }
      state = (*stored)->state();
    }
    if (IsTerminal(state)) {
      if (DependencyMetBy(d.kind, state)) continue;
      return FailedPrecondition(std::string(kind) + ": job " + std::to_string(d.job) + " ended " +
                                v1::JobState_Name(state) + ", so this job could never start");
    }
    job.add_deps_pending(d.job);
  }
  return Status::Ok();
}

void DependencyIndex::Index(const v1::JobRecord& job) {
  for (uint64_t tid : job.deps_pending()) dependents_[{job.tenant(), tid}].push_back(job.id());
  IndexCorr(job);
}

void DependencyIndex::Settle(Ending ending) {
  endings_.push_back(std::move(ending));
  if (settling_) return;  // the loop below settles it in turn
  settling_ = true;
  while (!endings_.empty()) {
    const Ending e = std::move(endings_.front());
    endings_.pop_front();
    if (e.elements.empty()) {
      SettleJob(e);
    } else {
      SettleElements(e);
    }
  }
  settling_ = false;
}

void DependencyIndex::SettleJob(const Ending& ended) {
  const std::pair<std::string, uint64_t> key = {ended.tenant, ended.job};
  if (ended.array) SettleArrayEnd(key, ended.state);
  auto it = dependents_.find(key);
  if (it == dependents_.end()) return;
  const std::vector<uint64_t> waiting = std::move(it->second);
  dependents_.erase(it);
  for (uint64_t id : waiting) {
    v1::JobRecord* job = jobs_.Find(id);
    if (job == nullptr || job->state() != v1::PENDING) continue;
    auto* pending = job->mutable_deps_pending();
    pending->erase(std::remove(pending->begin(), pending->end(), ended.job), pending->end());
    const DependencyKind kind =
        DependencyOn(job->spec(), ended.job).value_or(DependencyKind::kAfterOk);
    if (DependencyMetBy(kind, ended.state)) {
      jobs_.views().Put(*job);
      journal_.PutJob(*job);
      request_schedule_();
      continue;
    }
    const std::string reason = "cancelled: job " + std::to_string(ended.job) + " it depends on (" +
                               DependencyName(kind) + ") ended " + v1::JobState_Name(ended.state);
    LOG(INFO) << "job " << job->id() << " " << reason;
    jobs_.SetState(*job, v1::CANCELLED, clock_.NowMs(), reason);
    writer_.Persist(*job);  // its end is settled in turn (Settle's loop)
  }
}

void DependencyIndex::Recover() {
  std::vector<uint64_t> waiting;
  for (const auto& [id, job] : jobs_.jobs()) {
    if (job.state() == v1::PENDING && job.deps_pending_size() > 0) waiting.push_back(id);
  }
  for (uint64_t id : waiting) {
    v1::JobRecord& job = *jobs_.Find(id);
    // Each awaited job is still live (its end would have settled this one in the same batch);
    // one that is not is settled now, from the archive.
    std::vector<uint64_t> keep;
    std::string cancel;
    for (uint64_t tid : job.deps_pending()) {
      if (const v1::JobRecord* dep = jobs_.FindByTenant(job.tenant(), tid);
          dep != nullptr && !IsTerminal(dep->state())) {
        keep.push_back(tid);
        continue;
      }
      auto stored = archive_.FindByTenant(job.tenant(), tid);
      if (!stored.ok()) {  // cannot tell now: keep waiting
        keep.push_back(tid);
        continue;
      }
      const DependencyKind kind = DependencyOn(job.spec(), tid).value_or(DependencyKind::kAfterOk);
      if (*stored && DependencyMetBy(kind, (*stored)->state())) continue;
      cancel = "cancelled: job " + std::to_string(tid) + " it depends on (" + DependencyName(kind) +
               ") " + (*stored ? "ended " + v1::JobState_Name((*stored)->state()) : "is gone");
    }
    job.clear_deps_pending();
    for (uint64_t tid : keep) job.add_deps_pending(tid);
    if (!cancel.empty()) {
      jobs_.SetState(job, v1::CANCELLED, clock_.NowMs(), cancel);
    } else {
      jobs_.views().Put(job);
      for (uint64_t tid : job.deps_pending()) dependents_[{job.tenant(), tid}].push_back(id);
    }
    journal_.PutJob(job);
  }
  RecoverCorr();
}

}  // namespace snn
