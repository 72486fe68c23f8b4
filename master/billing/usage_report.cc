#include "master/billing/usage_report.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace snn {

v1::UsageRecord UsageOf(const v1::JobRecord& job, const v1::TaskRecord& task,
                        const std::string& board_type) {
  v1::UsageRecord r;
  r.set_job_id(job.id());
  r.set_tenant_job_id(job.tenant_job_id());
  r.set_array_job_id(job.array_job_id());
  r.set_array_task_id(job.array_task_id());
  r.set_task(task.index());
  r.set_attempt(task.attempt());
  r.set_tenant(job.tenant());
  r.set_user(job.spec().user());
  r.set_pool(job.spec().pool());
  r.set_board_type(board_type);
  const v1::Resources& res = job.spec().task().resources();
  r.set_cores(res.cores());
  r.set_ksps(res.ksps());
  r.set_units(res.units());
  r.set_submit_ms(job.submit_ms());
  r.set_start_ms(task.start_ms());
  const bool running = task.state() == v1::TASK_RUNNING || task.state() == v1::TASK_LAUNCHING;
  r.set_end_ms(running ? 0 : std::max(task.start_ms(), task.end_ms()));
  r.set_spikes(task.usage().injected());
  r.set_state(running ? "RUNNING" : v1::TaskState_Name(task.state()));
  r.set_exit_code(task.exit_code());
  if (job.spec().kind() == v1::SESSION) {
    r.set_kind("session");
    const int64_t until = running ? job.idle_since_ms() : r.end_ms();
    r.set_idle_ms(job.idle_ms() + (job.idle_since_ms() > 0
                                       ? std::max<int64_t>(0, until - job.idle_since_ms())
                                       : 0));
  } else if (job.spec().kind() == v1::STEP) {
    r.set_kind("step");
    r.set_session(job.spec().alloc());
  } else if (job.spec().kind() == v1::SERVICE) {
    r.set_kind("service");
    r.set_busy_us(task.busy_us());
    r.set_experiments(task.experiments());
  }
  return r;
}

bool UsageMatches(const v1::UsageRecord& record, const v1::UsageRequest& request) {
  auto state_is = [&](const std::string& want) {
    // "EXITED" and "TASK_EXITED" alike, any case.
    std::string a = record.state(), b = want;
    for (auto* s : {&a, &b}) {
      std::transform(s->begin(), s->end(), s->begin(), ::toupper);
      if (s->rfind("TASK_", 0) == 0) s->erase(0, 5);
    }
    return a == b;
  };
  return UsageOfJob(record, request.job()) &&
         (request.user().empty() || record.user() == request.user()) &&
         (request.pool().empty() || record.pool() == request.pool()) &&
         (request.state().empty() || state_is(request.state()));
}

bool UsageOfJob(const v1::UsageRecord& record, uint64_t job) {
  return job == 0 || record.tenant_job_id() == job || record.array_job_id() == job;
}

void ReportBuilder::Add(const v1::UsageRecord& r) {
  if (r.kind() == "step") return;  // its time is its session's
  const int64_t end = r.end_ms() == 0 ? now_ms_ : r.end_ms();
  const int64_t begin = std::max(r.start_ms(), from_ms_);
  const int64_t until = std::min(end, to_ms_);
  const bool started_inside = r.start_ms() >= from_ms_ && r.start_ms() < to_ms_;
  if (until <= begin && !started_inside) return;
  double ms = static_cast<double>(std::max<int64_t>(0, until - begin));
  // An experiment record is its user's board time spread over when it ran; a service's, the
  // time its users did not use.
  const double span = static_cast<double>(std::max<int64_t>(0, end - r.start_ms()));
  const double busy_ms = static_cast<double>(r.busy_us()) / 1000;
  if (r.kind() == "experiment") ms = span > 0 ? ms * std::min(1.0, busy_ms / span) : busy_ms;
  if (r.kind() == "service" && span > 0) ms *= std::max(0.0, 1 - busy_ms / span);
  Sums& s = rows_[{r.tenant(), by_user_ ? r.user() : "", r.pool()}];
  s.core_ms += ms * r.cores();
  s.ksps_ms += ms * r.ksps();
  auto [job, fresh] = s.jobs.emplace(r.job_id(), -1);
  if (r.submit_ms() > 0 && started_inside) {
    const int64_t wait = std::max<int64_t>(0, r.start_ms() - r.submit_ms());
    job->second = job->second < 0 ? wait : std::min(job->second, wait);
  }
  pool_core_ms_[r.pool()] += ms * r.cores();
}

v1::ReportResponse ReportBuilder::Finish(const std::map<std::string, uint64_t>& pool_cores) const {
  constexpr double kMsPerHour = 3600.0 * 1000.0;
  v1::ReportResponse resp;
  resp.set_from_ms(from_ms_);
  resp.set_to_ms(to_ms_);
  for (const auto& [key, s] : rows_) {
    auto* row = resp.add_rows();
    row->set_tenant(std::get<0>(key));
    row->set_user(std::get<1>(key));
    row->set_pool(std::get<2>(key));
    row->set_core_hours(s.core_ms / kMsPerHour);
    row->set_ksps_hours(s.ksps_ms / kMsPerHour);
    row->set_jobs(static_cast<uint32_t>(s.jobs.size()));
    double wait_ms = 0;
    uint32_t waits = 0;
    for (const auto& [job, w] : s.jobs) {
      if (w < 0) continue;  // did not start in the period
      wait_ms += static_cast<double>(w);
      ++waits;
    }
    row->set_waits(waits);
    if (waits > 0) row->set_mean_wait_s(wait_ms / 1000.0 / waits);
  }
  std::set<std::string> pools;
  for (const auto& [pool, cores] : pool_cores) pools.insert(pool);
  for (const auto& [pool, ms] : pool_core_ms_) pools.insert(pool);
  // A period that reaches into the future is measured up to now.
  const double period_hours =
      static_cast<double>(std::max<int64_t>(0, std::min(to_ms_, now_ms_) - from_ms_)) / kMsPerHour;
  for (const auto& pool : pools) {
    auto* p = resp.add_pools();
    p->set_pool(pool);
    auto c = pool_cores.find(pool);
    p->set_cores(c == pool_cores.end() ? 0 : c->second);
    auto used = pool_core_ms_.find(pool);
    p->set_core_hours(used == pool_core_ms_.end() ? 0 : used->second / kMsPerHour);
    if (p->cores() > 0 && period_hours > 0) {
      p->set_utilization(p->core_hours() / (static_cast<double>(p->cores()) * period_hours));
    }
  }
  return resp;
}

v1::ReportResponse BuildReport(const std::vector<v1::UsageRecord>& records, int64_t from_ms,
                               int64_t to_ms, int64_t now_ms, bool by_user,
                               const std::map<std::string, uint64_t>& pool_cores) {
  ReportBuilder builder(from_ms, to_ms, now_ms, by_user);
  for (const auto& r : records) builder.Add(r);
  return builder.Finish(pool_cores);
}

bool UsageLimit::Add(v1::UsageRecord record) {
  if (limit_ == 0) {
    truncated_ = true;
    return false;
  }
  heap_.push_back(std::move(record));
  std::push_heap(heap_.begin(), heap_.end(), Earlier);
  if (heap_.size() > limit_) {
    std::pop_heap(heap_.begin(), heap_.end(), Earlier);
    heap_.pop_back();
    truncated_ = true;
  }
  return true;
}

bool UsageLimit::Earlier(const v1::UsageRecord& a, const v1::UsageRecord& b) {
  return std::make_tuple(a.start_ms(), a.job_id(), a.task(), a.attempt()) <
         std::make_tuple(b.start_ms(), b.job_id(), b.task(), b.attempt());
}

std::vector<v1::UsageRecord> UsageLimit::Take() {
  std::sort_heap(heap_.begin(), heap_.end(), Earlier);
  return std::move(heap_);
}

}  // namespace snn
