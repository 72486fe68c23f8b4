// Replays a workload trace through the master's scheduler core (PlanPass) in virtual time: every
// submit and every end is an event, and each event runs one scheduling pass, as the master does.
// Each trace job becomes a gang of one-core tasks on a pool of MaxProcs one-core boards (the
// convention in the literature), given to the pass as one class of boards that it counts
// (BoardCapacity::units: one step per job, and EASY's reservation from the profile of
// releases, so a pass costs the same on 100 processors as on 93,312); or, with a mesh, one task
// of `procs` cores placed as a rectangle on W x H boards. Jobs run for their real run time; the
// scheduler sees only their estimates. Deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "master/sched/accrual.h"
#include "master/sched/priority.h"
#include "master/sched/scheduler.h"
#include "sim/swf.h"

namespace snn {

enum class SimPolicy { kFcfs, kEasy, kDefault };

// An advance reservation that closes boards to every job of the trace (maintenance): from
// start_s (trace time) for duration_s, again every period_s (0: once), on `boards` (indices;
// empty: every board). Without a mesh, one-core boards are counted, not placed: a reservation
// closes all of them (`boards` must be empty).
struct SimReservation {
  int64_t start_s = 0, duration_s = 0, period_s = 0;
  std::vector<uint32_t> boards;
};

struct ReplayOptions {
  SimPolicy policy = SimPolicy::kDefault;
  uint32_t mesh_width = 0, mesh_height = 0;     // 0: one-core boards
  PriorityWeights weights;                      // for kDefault
  int64_t backfill_age_first_after_ms = -1;     // for kDefault; -1: the master's default
  std::optional<bool> backfill_shortest_first;  // for kDefault; none: the master's default
  // For kDefault (SchedulerPolicy::backfill_past_reservation_by_priority); none: the default.
  std::optional<bool> backfill_past_reservation_by_priority;
  std::optional<uint32_t> accrue_per_user;  // for kDefault; none: the master's default
  int64_t fairshare_half_life_s = 7 * 86400;
  // For kDefault: the priority's slowdown factor on time limits rather than on predicted run
  // times (the master's way; for comparison).
  bool slowdown_from_limits = false;
  // Give every pending job to each pass, with words, as the master's full pass does: the same
  // decisions, at a cost that grows with the queue. For checking the fast path.
  bool whole_queue_each_pass = false;
  // Forecast each job's start at its submit (master/sched/start_forecast.h), and what its own
  // reservation alone would say, for every `forecast_every`-th job that does not start at once
  // (0: none). Slow on deep queues: each forecast carries the plan forward.
  uint32_t forecast_every = 0;
  // Maintenance windows. A job whose estimate fits between the windows on no board could never
  // run: the replay refuses the trace, naming it.
  std::vector<SimReservation> reservations;
};

struct JobOutcome {
  uint64_t id = 0;
  int64_t submit_s = 0, start_s = 0, run_s = 0;
  uint32_t procs = 0;
  int64_t user = -1;
  // With ReplayOptions::forecast_every: at submit, the start the forecast gave and the one the
  // job's own reservation gave (ignoring the jobs ahead of it); -1: not forecast.
  int64_t forecast_s = -1, reservation_only_s = -1;
  std::vector<uint32_t> boards;  // with a mesh: the boards it ran on
};

// The share of the boards' time from `from_s` to `to_s` that the reservations close
// (`boards`: how many there are).
double ReservedShare(const std::vector<SimReservation>& reservations, int64_t from_s, int64_t to_s,
                     uint32_t boards);

struct UserFigures {
  uint64_t jobs = 0;
  double mean_bounded_slowdown = 0;
};

struct ReplayMetrics {
  uint64_t jobs = 0;
  double mean_wait_s = 0;
  double mean_bounded_slowdown = 0;  // tau 10 s
  double utilization = 0;
  double max_wait_s = 0;
  double p50_wait_s = 0, p95_wait_s = 0, p99_wait_s = 0;  // nearest rank
  uint64_t users = 0;
  // The standard deviation across users of their normalized user wait time: a user's total
  // wait over the user's total processor-seconds (Klusacek & Rudova, JSSPP 2012). Users with
  // no processor-seconds (only zero-length jobs) are left out.
  double nuwt_sd = 0;
  // Jain's index over the users' rates of service, 1 / mean bounded slowdown: the form Jain
  // defined it for (an allocation, more is better). Jain's index over the slowdowns themselves,
  // the measure of earlier issues, rewarded everyone suffering alike: retired.
  double service_fairness = 0;
  double worst_user_slowdown = 0;  // the highest mean bounded slowdown of any user
  // The share of jobs that started after their fair start time (sim/fair_start.h states the
  // approximation).
  double late_share = 0;
  // The span utilization is over: the first submit to the last end.
  int64_t first_submit_s = 0, last_end_s = 0;
  // Utilization while jobs arrive: the processor-seconds busy from the first submit to the last,
  // over that span. A replay ends by running what is left once nothing more arrives (on an
  // overloaded machine, most of the replay): only the jobs nobody ran before, the widest and
  // longest, and no short ones to fill around them. The span while jobs arrive is the steady
  // state a site runs in; the whole span mixes in that drain-out.
  double arrival_utilization = 0;
  int64_t last_submit_s = 0;
  // With maintenance windows (ReplayOptions::reservations): the share of the span they close,
  // and of the span while jobs arrive (set by the caller: ReservedShare).
  double reserved_share = 0, arrival_reserved_share = 0;
  // Over the jobs forecast at submit: the median of |forecast - actual start| / actual wait,
  // for the forecast and for the reservation-only estimate.
  uint64_t forecasts = 0;
  double forecast_error = 0, reservation_only_error = 0;
  int64_t worst_user = -1;
  std::map<int64_t, UserFigures> per_user;
};

// The policy each SimPolicy names: FCFS, EASY, and the project's default.
// `explain`: with words for every waiting job, as the master's full pass (slower).
SchedulerPolicy PolicyFor(SimPolicy policy, bool explain = false);
PriorityWeights DefaultWeights();

Result<std::vector<JobOutcome>> Replay(const Trace& trace, const ReplayOptions& options);
ReplayMetrics Summarize(const std::vector<JobOutcome>& jobs, uint32_t max_procs);
// The metrics as one JSON object (snn-sim --json).
std::string MetricsJson(const ReplayMetrics& m);

// Moves a random 10% of the jobs' submit times by up to +-5 minutes (uniformly, whole
// seconds, never before 0), then sorts them again by submit (Tsafrir, Ouaknine & Feitelson,
// 2007: a result that holds on shaken copies does not rest on one lucky ordering). The same
// seed shakes the same way.
void ShakeTrace(Trace& trace, uint64_t seed);

// Writes one job a line, "id submit start wait run procs" (seconds), under a header line.
Status WriteJobOutcomes(const std::vector<JobOutcome>& jobs, const std::string& path);

}  // namespace snn
