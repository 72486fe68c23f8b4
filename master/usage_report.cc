#include "master/usage_report.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace snn {

v1::UsageRecord UsageOf(const v1::JobRecord& job, const v1::TaskRecord& task,
                        const std::string& board_type) {
  v1::UsageRecord r;
  r.set_job_id(job.id());
  r.set_tenant_job_id(job.tenant_job_id());
  r.set_task(task.index());
  r.set_attempt(task.attempt());
  r.set_tenant(job.tenant());
  r.set_user(job.spec().user());
  r.set_pool(job.spec().pool());
  r.set_board_type(board_type);
  const v1::Resources& res = job.spec().task().resources();
  r.set_cores(res.cores());
  r.set_ksps(res.ksps());
  r.set_submit_ms(job.submit_ms());
  r.set_start_ms(task.start_ms());
  const bool running = task.state() == v1::TASK_RUNNING || task.state() == v1::TASK_LAUNCHING;
  r.set_end_ms(running ? 0 : std::max(task.start_ms(), task.end_ms()));
  r.set_spikes(task.usage().injected());
  r.set_state(running ? "RUNNING" : v1::TaskState_Name(task.state()));
  r.set_exit_code(task.exit_code());
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
  return (request.user().empty() || record.user() == request.user()) &&
         (request.pool().empty() || record.pool() == request.pool()) &&
         (request.state().empty() || state_is(request.state()));
}

v1::ReportResponse BuildReport(const std::vector<v1::UsageRecord>& records, int64_t from_ms,
                               int64_t to_ms, int64_t now_ms, bool by_user,
                               const std::map<std::string, uint64_t>& pool_cores) {
  struct Sums {
    double core_ms = 0, ksps_ms = 0;
    std::set<uint64_t> jobs;
    std::map<uint64_t, int64_t> waits;  // job -> submit to its first start in the period
  };
  std::map<std::tuple<std::string, std::string, std::string>, Sums> rows;
  std::map<std::string, double> pool_core_ms;
  for (const auto& r : records) {
    const int64_t end = r.end_ms() == 0 ? now_ms : r.end_ms();
    const int64_t begin = std::max(r.start_ms(), from_ms);
    const int64_t until = std::min(end, to_ms);
    if (until <= begin && !(r.start_ms() >= from_ms && r.start_ms() < to_ms)) continue;
    const double ms = static_cast<double>(std::max<int64_t>(0, until - begin));
    Sums& s = rows[{r.tenant(), by_user ? r.user() : "", r.pool()}];
    s.core_ms += ms * r.cores();
    s.ksps_ms += ms * r.ksps();
    s.jobs.insert(r.job_id());
    pool_core_ms[r.pool()] += ms * r.cores();
    if (r.submit_ms() > 0 && r.start_ms() >= from_ms && r.start_ms() < to_ms) {
      auto [it, fresh] = s.waits.emplace(r.job_id(), r.start_ms() - r.submit_ms());
      if (!fresh) it->second = std::min(it->second, r.start_ms() - r.submit_ms());
    }
  }
  constexpr double kMsPerHour = 3600.0 * 1000.0;
  v1::ReportResponse resp;
  resp.set_from_ms(from_ms);
  resp.set_to_ms(to_ms);
  for (const auto& [key, s] : rows) {
    auto* row = resp.add_rows();
    row->set_tenant(std::get<0>(key));
    row->set_user(std::get<1>(key));
    row->set_pool(std::get<2>(key));
    row->set_core_hours(s.core_ms / kMsPerHour);
    row->set_ksps_hours(s.ksps_ms / kMsPerHour);
    row->set_jobs(static_cast<uint32_t>(s.jobs.size()));
    double wait_ms = 0;
    for (const auto& [job, w] : s.waits) wait_ms += static_cast<double>(std::max<int64_t>(0, w));
    row->set_waits(static_cast<uint32_t>(s.waits.size()));
    if (!s.waits.empty()) row->set_mean_wait_s(wait_ms / 1000.0 / s.waits.size());
  }
  std::set<std::string> pools;
  for (const auto& [pool, cores] : pool_cores) pools.insert(pool);
  for (const auto& [pool, ms] : pool_core_ms) pools.insert(pool);
  // A period that reaches into the future is measured up to now.
  const double period_hours =
      static_cast<double>(std::max<int64_t>(0, std::min(to_ms, now_ms) - from_ms)) / kMsPerHour;
  for (const auto& pool : pools) {
    auto* p = resp.add_pools();
    p->set_pool(pool);
    auto c = pool_cores.find(pool);
    p->set_cores(c == pool_cores.end() ? 0 : c->second);
    auto used = pool_core_ms.find(pool);
    p->set_core_hours(used == pool_core_ms.end() ? 0 : used->second / kMsPerHour);
    if (p->cores() > 0 && period_hours > 0) {
      p->set_utilization(p->core_hours() / (static_cast<double>(p->cores()) * period_hours));
    }
  }
  return resp;
}

}  // namespace snn
