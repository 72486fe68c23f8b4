// JobLifecycle's part for recurring jobs (JobSpec.schedule): each time its schedule comes, a
// recurring job submits a run, a job of its own.
#include <glog/logging.h>

#include "common/base/cron_schedule.h"
#include "master/jobs/job_lifecycle.h"

namespace snn {

Result<int64_t> FirstRunOf(const v1::JobSpec& spec, int64_t now) {
  if (spec.schedule().empty()) return int64_t{0};
  if (spec.kind() != v1::BATCH || spec.has_array()) {
    return InvalidArgument("schedule: only a batch job recurs (not an array, session or service)");
  }
  if (spec.after_ok_size() > 0 || spec.after_any_size() > 0 || spec.after_not_ok_size() > 0 ||
      spec.after_corr_size() > 0 || spec.singleton()) {
    return InvalidArgument(
        "schedule: a recurring job has no dependencies (its runs never "
        "overlap: a run that comes while the last is live is skipped)");
  }
  auto cron = CronSchedule::Parse(spec.schedule());
  if (!cron.ok()) return cron.status();
  return cron->NextAfter(now).value_or(0);  // Parse refuses one that never comes
}

void JobLifecycle::SubmitRun(v1::JobRecord& recurring, int64_t now) {
  v1::JobRecord run;
  run.set_tenant(recurring.tenant());
  *run.mutable_spec() = recurring.spec();
  run.mutable_spec()->clear_schedule();
  run.set_id(jobs_.NextJobId());
  run.set_tenant_job_id(jobs_.NextTenantJobId(run.tenant()));
  run.set_submit_ms(now);
  run.set_reason("submitted");
  run.set_recurring_job_id(recurring.tenant_job_id());
  auto* t = run.add_history();
  t->set_time_ms(now);
  t->set_to(v1::PENDING);
  t->set_reason("submitted by its schedule (recurring job " +
                std::to_string(recurring.tenant_job_id()) + ")");
  const v1::JobRecord& inserted = jobs_.Insert(std::move(run));
  if (metrics_ != nullptr) metrics_->JobSubmitted();
  writer_.Persist(inserted);
  recurring.set_runs(recurring.runs() + 1);
  recurring.set_last_run(inserted.tenant_job_id());
  LOG(INFO) << "recurring job " << recurring.id() << " submitted its run, job " << inserted.id();
}

void JobLifecycle::RunSchedules() {
  const int64_t now = clock_.NowMs();
  bool changed = false;
  for (auto it = recurring_.begin(); it != recurring_.end();) {
    v1::JobRecord* recurring = jobs_.Find(*it);
    if (recurring == nullptr || recurring->state() != v1::PENDING) {
      it = recurring_.erase(it);
      continue;
    }
    ++it;
    if (recurring->next_run_ms() > now) continue;
    const v1::JobRecord* last =
        recurring->last_run() == 0 ? nullptr
                                   : jobs_.FindByTenant(recurring->tenant(), recurring->last_run());
    if ((last != nullptr && !IsTerminal(last->state())) || !recurring->user_hold().empty()) {
      recurring->set_runs_skipped(recurring->runs_skipped() + 1);  // runs never overlap
    } else {
      SubmitRun(*recurring, now);
    }
    auto cron = CronSchedule::Parse(recurring->spec().schedule());
    recurring->set_next_run_ms(cron.ok() ? cron->NextAfter(now).value_or(0) : 0);
    if (recurring->next_run_ms() == 0) {
      jobs_.SetState(*recurring, v1::COMPLETED, now, "its schedule comes no more");
    } else {
      jobs_.views().Put(*recurring);
    }
    writer_.Persist(*recurring);
    changed = true;
  }
  if (!changed) return;
  journal_.Commit();
  request_schedule_();
}

}  // namespace snn
