// snn-sim: replays an SWF workload trace through the master's scheduler core in virtual time and
// prints the figures one a line, for scripts to compare runs.
#include <gflags/gflags.h>

#include <cstdio>

#include "common/base/clock.h"
#include "common/base/duration.h"
#include "common/daemon/program_flags.h"
#include "sim/replay.h"

DEFINE_string(trace, "", "the SWF trace (plain or .gz)");
DEFINE_string(policy, "default", "fcfs, easy, or default (the master's default policy)");
DEFINE_string(on_bad_line, "stop",
              "a broken trace line (not 18 fields, or a field that is not a number): stop (an "
              "error naming the line) or skip (counted, and the first one shown)");
DEFINE_string(mesh, "",
              "map each job to one rectangle of cores on WxH boards (default: a gang "
              "of one-core tasks on MaxProcs one-core boards)");
DEFINE_double(age_weight, -1, "default policy: weight of the age factor (-1: the default)");
DEFINE_double(fairshare_weight, -1, "default policy: weight of the fair-share factor");
DEFINE_double(slowdown_weight, -1, "default policy: weight of the expected-slowdown factor");
DEFINE_double(size_weight, -1,
              "default policy: weight of the job-size factor (favoring large jobs)");
DEFINE_double(max_age_h, -1, "default policy: hours of waiting that earn the full age factor");
DEFINE_double(starve_after_h, -1,
              "default policy: hours after which a job goes ahead of younger ones");
DEFINE_double(backfill_age_first_after_h, -1,
              "default policy: hours of waiting after which a job "
              "is tried for backfill before shorter ones (0: never; -1: the default)");
DEFINE_string(backfill_past_reservation, "",
              "default policy, shortest-first backfill: the order of the candidates that would run "
              "past the reservation's start while its job starves: priority or shortest_first "
              "(empty: the default, priority)");
DEFINE_string(backfill_order, "",
              "default policy: shortest_first or queue (the order backfill candidates are "
              "tried in; empty: the default)");
DEFINE_int32(accrue_per_user, -1,
             "default policy: only each user's first N pending jobs accrue waiting time (0: every "
             "job; -1: the default)");
DEFINE_uint32(forecast_every, 0,
              "forecast the start of every Nth job at its submit (as snnctl jobs --start does) "
              "and print the median relative error against the job's own reservation alone "
              "(0: no forecasts; slow on deep queues)");
DEFINE_string(slowdown_from, "prediction",
              "default policy: the slowdown factor's run time, prediction (the user's last two "
              "jobs, at most the limit: the master's) or limit");
DEFINE_string(jobs_out, "",
              "also write each job's id, submit, start, wait, run time and processors "
              "to this file, one job a line, for comparison with other schedulers");
DEFINE_string(maintenance, "",
              "close every board for this long each day (2h), a maintenance reservation no "
              "job of the trace is in");
DEFINE_string(maintenance_at, "2h",
              "with --maintenance: when the first window opens, counted from the trace's time 0");
DEFINE_string(drop_longer_than, "",
              "leave out the jobs that ask for more than this (22h: what fits between daily 2h "
              "windows), counted in the output; for comparing replays with and without "
              "--maintenance on the same jobs");
DEFINE_double(load_factor, 1,
              "submit every job this many times sooner (submit time / F): a load the machine "
              "cannot keep up with shows what capacity a policy or a reservation costs");
DEFINE_bool(per_user, false, "also print each user's job count and mean bounded slowdown");
DEFINE_bool(json, false, "print the metrics as one JSON object (and nothing else)");
DEFINE_uint64(shake, 0,
              "shake the trace first: a random 10% of the jobs submitted up to 5 minutes "
              "earlier or later, by this seed (0: as written)");

namespace {

// The replay's options from the flags; false (having said why) if one is wrong.
bool ReadOptions(snn::ReplayOptions& options) {
  if (FLAGS_policy == "fcfs") {
    options.policy = snn::SimPolicy::kFcfs;
  } else if (FLAGS_policy == "easy") {
    options.policy = snn::SimPolicy::kEasy;
  } else if (FLAGS_policy == "default") {
    options.policy = snn::SimPolicy::kDefault;
  } else {
    std::fprintf(stderr, "snn-sim: --policy is '%s'; use fcfs, easy or default\n",
                 FLAGS_policy.c_str());
    return false;
  }
  options.weights = snn::DefaultWeights();
  if (FLAGS_age_weight >= 0) options.weights.age = FLAGS_age_weight;
  if (FLAGS_fairshare_weight >= 0) options.weights.fairshare = FLAGS_fairshare_weight;
  if (FLAGS_slowdown_weight >= 0) options.weights.slowdown = FLAGS_slowdown_weight;
  if (FLAGS_size_weight >= 0) options.weights.size = FLAGS_size_weight;
  if (FLAGS_starve_after_h >= 0)
    options.weights.starve_after_ms = static_cast<int64_t>(FLAGS_starve_after_h * 3600e3);
  if (FLAGS_backfill_age_first_after_h >= 0) {
    options.backfill_age_first_after_ms =
        static_cast<int64_t>(FLAGS_backfill_age_first_after_h * 3600e3);
  }
  if (FLAGS_accrue_per_user >= 0) {
    options.accrue_per_user = static_cast<uint32_t>(FLAGS_accrue_per_user);
  }
  if (!FLAGS_backfill_order.empty()) {
    if (FLAGS_backfill_order != "shortest_first" && FLAGS_backfill_order != "queue") {
      std::fprintf(stderr, "snn-sim: --backfill_order is '%s'; use shortest_first or queue\n",
                   FLAGS_backfill_order.c_str());
      return false;
    }
    options.backfill_shortest_first = FLAGS_backfill_order == "shortest_first";
  }
  if (!FLAGS_backfill_past_reservation.empty()) {
    if (FLAGS_backfill_past_reservation != "priority" &&
        FLAGS_backfill_past_reservation != "shortest_first") {
      std::fprintf(stderr,
                   "snn-sim: --backfill_past_reservation is '%s'; use priority or shortest_first\n",
                   FLAGS_backfill_past_reservation.c_str());
      return false;
    }
    options.backfill_past_reservation_by_priority = FLAGS_backfill_past_reservation == "priority";
  }
  options.forecast_every = FLAGS_forecast_every;
  if (FLAGS_slowdown_from != "prediction" && FLAGS_slowdown_from != "limit") {
    std::fprintf(stderr, "snn-sim: --slowdown_from is '%s'; use prediction or limit\n",
                 FLAGS_slowdown_from.c_str());
    return false;
  }
  options.slowdown_from_limits = FLAGS_slowdown_from == "limit";
  if (FLAGS_max_age_h > 0)
    options.weights.max_age_ms = static_cast<int64_t>(FLAGS_max_age_h * 3600e3);
  if (!FLAGS_mesh.empty()) {
    char x = 0;
    if (std::sscanf(FLAGS_mesh.c_str(), "%u%c%u", &options.mesh_width, &x, &options.mesh_height) !=
            3 ||
        x != 'x' || options.mesh_width == 0 || options.mesh_height == 0) {
      std::fprintf(stderr, "snn-sim: --mesh is '%s'; write WxH\n", FLAGS_mesh.c_str());
      return false;
    }
  }
  if (!FLAGS_maintenance.empty()) {
    auto length = snn::ParseDurationSeconds(FLAGS_maintenance);
    auto at = snn::ParseDurationSeconds(FLAGS_maintenance_at);
    if (!length.ok() || !at.ok() || *length >= 86400) {
      std::fprintf(stderr,
                   "snn-sim: --maintenance '%s' and --maintenance_at '%s' must be durations "
                   "(2h, 90m), the first shorter than a day\n",
                   FLAGS_maintenance.c_str(), FLAGS_maintenance_at.c_str());
      return false;
    }
    options.reservations.push_back(
        snn::SimReservation{static_cast<int64_t>(*at), static_cast<int64_t>(*length), 86400, {}});
  }
  if (FLAGS_on_bad_line != "stop" && FLAGS_on_bad_line != "skip") {
    std::fprintf(stderr, "snn-sim: --on_bad_line is '%s'; use stop or skip\n",
                 FLAGS_on_bad_line.c_str());
    return false;
  }
  return true;
}

// The figures, as people read them (--per_user: each user's first).
void PrintReport(const snn::ReplayMetrics& m, const snn::Trace& trace,
                 const snn::ReplayOptions& options, double seconds, size_t dropped_long) {
  if (FLAGS_per_user) {
    for (const auto& [user, u] : m.per_user) {
      std::printf("user %lld: %llu jobs, mean bounded slowdown %.1f\n",
                  static_cast<long long>(user), static_cast<unsigned long long>(u.jobs),
                  u.mean_bounded_slowdown);
    }
  }
  std::printf("policy: %s\n", FLAGS_policy.c_str());
  auto n = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf(
      "jobs: %llu of %llu job lines (dropped by the conventions: %llu with no run time, %llu with "
      "no processor count; %llu capped at MaxProcs %u%s; %llu fields with decimals)\n",
      n(m.jobs), n(trace.job_lines), n(trace.dropped_run_time), n(trace.dropped_procs),
      n(trace.capped), trace.max_procs,
      trace.max_procs_in_header ? "" : ", the widest job: no MaxProcs in the header",
      n(trace.decimal_fields));
  if (!FLAGS_drop_longer_than.empty()) {
    std::printf("left out by --drop_longer_than=%s: %llu jobs\n", FLAGS_drop_longer_than.c_str(),
                n(dropped_long));
  }
  if (trace.bad_lines > 0) {
    std::printf("broken lines skipped: %llu (the first: %s)\n", n(trace.bad_lines),
                trace.first_bad_line.c_str());
  }
  std::printf("replay s: %.2f\n", seconds);
  std::printf("users: %llu\n", static_cast<unsigned long long>(m.users));
  std::printf("user fairness of service (Jain index of per-user 1 / mean bounded slowdown): %.3f\n",
              m.service_fairness);
  std::printf("normalized user wait sd (NUWT, a user's wait over processor-seconds): %.4f\n",
              m.nuwt_sd);
  std::printf("worst user mean bounded slowdown: %.1f (user %lld)\n", m.worst_user_slowdown,
              static_cast<long long>(m.worst_user));
  std::printf("mean wait s: %.0f\n", m.mean_wait_s);
  std::printf("mean bounded slowdown: %.1f\n", m.mean_bounded_slowdown);
  std::printf("utilization: %.3f\n", m.utilization);
  std::printf("utilization while jobs arrive (first to last submit): %.4f\n",
              m.arrival_utilization);
  if (!options.reservations.empty()) {
    std::printf("closed by maintenance: %.3f of the machine's time, %.4f while jobs arrive\n",
                m.reserved_share, m.arrival_reserved_share);
  }
  std::printf("max wait s: %.0f\n", m.max_wait_s);
  std::printf("wait s p50 / p95 / p99: %.0f / %.0f / %.0f\n", m.p50_wait_s, m.p95_wait_s,
              m.p99_wait_s);
  std::printf("started after their fair start time: %.4f of the jobs\n", m.late_share);
  if (options.forecast_every > 0) {
    std::printf(
        "start forecast at submit, median |forecast - start| / wait over %llu waiting jobs: "
        "%.3f (the job's own reservation alone: %.3f)\n",
        static_cast<unsigned long long>(m.forecasts), m.forecast_error, m.reservation_only_error);
  }
}

}  // namespace

int main(int argc, char** argv) {
  snn::ParseProgramFlags(
      &argc, &argv,
      "snn-sim --trace=FILE.swf[.gz] [--policy=fcfs|easy|default] [--mesh=WxH]\n"
      "Replays a workload trace through the scheduler and prints mean wait, mean bounded "
      "slowdown, utilization, maximum wait and per-user fairness.");
  if (FLAGS_trace.empty()) {
    std::fprintf(stderr, "snn-sim: --trace is required\n");
    return 2;
  }
  snn::ReplayOptions options;
  if (!ReadOptions(options)) return 2;
  const snn::Stopwatch replay_time;
  auto trace = snn::ReadSwf(FLAGS_trace, FLAGS_on_bad_line == "skip");
  if (!trace.ok()) {
    std::fprintf(stderr, "snn-sim: %s\n", trace.status().message().c_str());
    return 1;
  }
  if (FLAGS_shake != 0) snn::ShakeTrace(*trace, FLAGS_shake);
  if (!(FLAGS_load_factor >= 1 && FLAGS_load_factor <= 1000)) {
    std::fprintf(stderr, "snn-sim: --load_factor must be from 1 to 1000\n");
    return 2;
  }
  if (FLAGS_load_factor > 1) {
    for (snn::TraceJob& j : trace->jobs) {
      j.submit_s = static_cast<int64_t>(static_cast<double>(j.submit_s) / FLAGS_load_factor);
    }
  }
  size_t dropped_long = 0;
  if (!FLAGS_drop_longer_than.empty()) {
    auto longest = snn::ParseDurationSeconds(FLAGS_drop_longer_than);
    if (!longest.ok()) {
      std::fprintf(stderr, "snn-sim: --drop_longer_than: %s\n", longest.status().message().c_str());
      return 2;
    }
    const size_t before = trace->jobs.size();
    std::erase_if(trace->jobs, [&](const snn::TraceJob& j) {
      return j.estimate_s > static_cast<int64_t>(*longest);
    });
    dropped_long = before - trace->jobs.size();
  }
  auto outcome = snn::Replay(*trace, options);
  if (!outcome.ok()) {
    std::fprintf(stderr, "snn-sim: %s\n", outcome.status().message().c_str());
    return 1;
  }
  if (!FLAGS_jobs_out.empty()) {
    if (snn::Status s = snn::WriteJobOutcomes(*outcome, FLAGS_jobs_out); !s.ok()) {
      std::fprintf(stderr, "snn-sim: %s\n", s.message().c_str());
      return 1;
    }
  }
  const double seconds = replay_time.Seconds();  // the replay's, not the metrics'
  snn::ReplayMetrics m = snn::Summarize(*outcome, trace->max_procs);
  m.reserved_share = snn::ReservedShare(options.reservations, m.first_submit_s, m.last_end_s, 1);
  m.arrival_reserved_share =
      snn::ReservedShare(options.reservations, m.first_submit_s, m.last_submit_s, 1);
  if (FLAGS_json) {
    std::printf("%s\n", snn::MetricsJson(m).c_str());
    return 0;
  }
  PrintReport(m, *trace, options, seconds, dropped_long);
  return 0;
}
