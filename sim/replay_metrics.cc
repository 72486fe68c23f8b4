// What a replay measured (sim/replay.h): the metrics, their JSON, the jobs' outcomes file and
// the share of the time maintenance windows closed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include "master/sched/board_closure.h"
#include "sim/fair_start.h"
#include "sim/replay.h"

namespace snn {

double ReservedShare(const std::vector<SimReservation>& reservations, int64_t from_s, int64_t to_s,
                     uint32_t boards) {
  if (to_s <= from_s || boards == 0) return 0;
  double closed = 0;  // board-seconds
  for (const SimReservation& r : reservations) {
    const BoardClosure c{"", r.start_s, r.start_s + r.duration_s, r.period_s};
    const double on = r.boards.empty() ? boards : static_cast<double>(r.boards.size());
    int64_t s = 0, e = 0;
    for (int64_t t = from_s; c.OccurrenceAfter(t, &s, &e) && s < to_s; t = e) {
      closed += on * static_cast<double>(std::min(e, to_s) - std::max(s, from_s));
    }
  }
  return closed / (static_cast<double>(boards) * static_cast<double>(to_s - from_s));
}

Status WriteJobOutcomes(const std::vector<JobOutcome>& jobs, const std::string& path) {
  std::ofstream out(path);
  out << "# id submit_s start_s wait_s run_s procs\n";
  for (const JobOutcome& j : jobs) {
    out << j.id << ' ' << j.submit_s << ' ' << j.start_s << ' ' << j.start_s - j.submit_s << ' '
        << j.run_s << ' ' << j.procs << '\n';
  }
  out.flush();
  if (!out) return InvalidArgument("cannot write the job outcomes to " + path);
  return Status::Ok();
}

ReplayMetrics Summarize(const std::vector<JobOutcome>& jobs, uint32_t max_procs) {
  ReplayMetrics m;
  if (jobs.empty()) return m;
  double wait_sum = 0, bsld_sum = 0, work = 0;
  int64_t first_submit = INT64_MAX, last_end = INT64_MIN, last_submit = INT64_MIN;
  std::map<int64_t, std::pair<double, uint64_t>> per_user;  // bsld sum, count
  std::map<int64_t, std::pair<double, double>> user_wait;   // wait, processor-seconds
  std::vector<double> waits;
  waits.reserve(jobs.size());
  for (const JobOutcome& j : jobs) {
    const double wait = static_cast<double>(j.start_s - j.submit_s);
    const double run = static_cast<double>(j.run_s);
    const double bsld = std::max(1.0, (wait + run) / std::max(run, 10.0));
    waits.push_back(wait);
    auto& uw = user_wait[j.user];
    uw.first += wait;
    uw.second += run * j.procs;
    wait_sum += wait;
    bsld_sum += bsld;
    m.max_wait_s = std::max(m.max_wait_s, wait);
    work += run * j.procs;
    first_submit = std::min(first_submit, j.submit_s);
    last_submit = std::max(last_submit, j.submit_s);
    last_end = std::max(last_end, j.start_s + j.run_s);
    auto& u = per_user[j.user];
    u.first += bsld;
    ++u.second;
  }
  m.jobs = jobs.size();
  m.mean_wait_s = wait_sum / static_cast<double>(jobs.size());
  m.mean_bounded_slowdown = bsld_sum / static_cast<double>(jobs.size());
  m.utilization =
      work / (static_cast<double>(max_procs) * static_cast<double>(last_end - first_submit));
  m.first_submit_s = first_submit;
  m.last_end_s = last_end;
  m.last_submit_s = last_submit;
  if (last_submit > first_submit) {
    double arriving_work = 0;  // processor-seconds busy from the first submit to the last
    for (const JobOutcome& j : jobs) {
      const int64_t from = std::max(j.start_s, first_submit);
      const int64_t to = std::min(j.start_s + j.run_s, last_submit);
      if (to > from) arriving_work += static_cast<double>(to - from) * j.procs;
    }
    m.arrival_utilization = arriving_work / (static_cast<double>(max_procs) *
                                             static_cast<double>(last_submit - first_submit));
  }
  std::sort(waits.begin(), waits.end());
  auto rank = [&](double p) {  // nearest rank
    const size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(waits.size())));
    return waits[std::min(waits.size(), std::max<size_t>(k, 1)) - 1];
  };
  m.p50_wait_s = rank(0.50);
  m.p95_wait_s = rank(0.95);
  m.p99_wait_s = rank(0.99);
  double nuwt_sum = 0, nuwt_sq = 0, nuwt_users = 0;
  for (const auto& [user, w] : user_wait) {
    if (w.second <= 0) continue;
    const double nuwt = w.first / w.second;
    nuwt_sum += nuwt;
    nuwt_sq += nuwt * nuwt;
    ++nuwt_users;
  }
  if (nuwt_users > 0) {
    const double mean = nuwt_sum / nuwt_users;
    m.nuwt_sd = std::sqrt(std::max(0.0, nuwt_sq / nuwt_users - mean * mean));
  }
  double r = 0, r2 = 0;
  for (const auto& [user, v] : per_user) {
    const double mean = v.first / static_cast<double>(v.second);
    m.per_user[user] = UserFigures{v.second, mean};
    r += 1 / mean;  // mean >= 1
    r2 += 1 / (mean * mean);
    if (mean > m.worst_user_slowdown) {
      m.worst_user_slowdown = mean;
      m.worst_user = user;
    }
  }
  m.users = per_user.size();
  std::vector<double> forecast_errors, alone_errors;
  for (const JobOutcome& j : jobs) {
    if (j.forecast_s < 0 || j.reservation_only_s < 0 || j.start_s <= j.submit_s) continue;
    const double wait = static_cast<double>(j.start_s - j.submit_s);
    forecast_errors.push_back(std::abs(static_cast<double>(j.forecast_s - j.start_s)) / wait);
    alone_errors.push_back(std::abs(static_cast<double>(j.reservation_only_s - j.start_s)) / wait);
  }
  auto median = [](std::vector<double>& v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  m.forecasts = forecast_errors.size();
  m.forecast_error = median(forecast_errors);
  m.reservation_only_error = median(alone_errors);
  m.late_share = FairStarts(jobs, max_procs).late_share;
  m.service_fairness = r2 > 0 ? r * r / (static_cast<double>(per_user.size()) * r2) : 1;
  return m;
}

std::string MetricsJson(const ReplayMetrics& m) {
  char text[1280];
  std::snprintf(text, sizeof text,
                "{\"jobs\": %llu, \"users\": %llu, \"mean_bounded_slowdown\": %.6f, "
                "\"utilization\": %.6f, \"mean_wait_s\": %.3f, \"p50_wait_s\": %.0f, "
                "\"p95_wait_s\": %.0f, \"p99_wait_s\": %.0f, \"max_wait_s\": %.0f, "
                "\"nuwt_sd\": %.6f, \"service_fairness\": %.6f, "
                "\"worst_user_bounded_slowdown\": %.6f, \"worst_user\": %lld, "
                "\"late_share\": %.6f, \"forecasts\": %llu, \"forecast_error\": %.6f, "
                "\"reservation_only_error\": %.6f, \"reserved_share\": %.6f, "
                "\"arrival_utilization\": %.6f, \"arrival_reserved_share\": %.6f}",
                static_cast<unsigned long long>(m.jobs), static_cast<unsigned long long>(m.users),
                m.mean_bounded_slowdown, m.utilization, m.mean_wait_s, m.p50_wait_s, m.p95_wait_s,
                m.p99_wait_s, m.max_wait_s, m.nuwt_sd, m.service_fairness, m.worst_user_slowdown,
                static_cast<long long>(m.worst_user), m.late_share,
                static_cast<unsigned long long>(m.forecasts), m.forecast_error,
                m.reservation_only_error, m.reserved_share, m.arrival_utilization,
                m.arrival_reserved_share);
  return text;
}

}  // namespace snn
