// When each pending job should start: the scheduler's own plan carried forward. From the state
// of a pass (the pending jobs in priority order, the running jobs, the boards), it runs the
// same pass (PlanPass, deciding on time limits as the scheduler does) at `now`, then again at
// each time a running job (or one the plan started) is expected to end, releasing what that
// job holds, until every job it looks at has started: a job's forecast is the time the plan
// starts it. A job is expected to end when its run-time prediction says (runtime_prediction.h:
// its user's last two jobs), or at its time limit without one; nothing is submitted meanwhile,
// no board fails, the order stays as it is now, and nobody is preempted. Core-hour limits
// (window_limits.h): what ended, and what the plan's own jobs use, stays in their windows for the
// plan, so the plan never starts a job earlier than a limit lets it; a job a limit holds back
// gets no start (kLimited) rather than a guess. Run on time limits
// alone (as Slurm's `squeue --start` is) a forecast is pessimistic wherever jobs end early,
// which most do.
// Pure: no clock, no I/O. Thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "master/sched/scheduler_types.h"

namespace snn {

struct StartForecast {
  uint64_t job_id = 0;
  // The planned start (ms since the epoch, as the input's now). 0: none in sight.
  int64_t start_ms = 0;
  enum class Basis : uint8_t {
    kPlan,  // started by the plan at start_ms
    kHeld,  // held (a user's hold, a dependency, a tenant over budget): no start planned
    // A core-hour limit holds it back (now, or once the plan's own jobs have used their time):
    // it starts as used core-time leaves the limit's window, which the plan does not follow.
    kLimited,
    kNever,        // the plan never starts it: the boards it needs are not up, or it never fits
    kBeyondLimit,  // further back in the queue than the forecast looks (ForecastLimits)
  };
  Basis basis = Basis::kPlan;
  bool backfilled = false;  // the plan starts it behind its pool's reservation for another job
};

// Words for a basis, as `snnctl jobs --start` shows them.
std::string BasisName(StartForecast::Basis basis);

struct ForecastLimits {
  size_t max_jobs = 1000;   // the first jobs in the order get a forecast; the rest kBeyondLimit
  size_t max_steps = 5000;  // passes at most (each at one time a job reaches its limit)
  uint64_t until_job = 0;   // stop once this job has its forecast (0: go on to the last)
  // How long a job is expected to run (at most its time limit); null: its time limit.
  std::function<int64_t(const SchedJob&)> expected_run_ms;
};

// One forecast per pending job of `input` (in the input's order). The running jobs must carry
// their tasks (placements) as the master's views do. `policy` as the scheduler's, its
// preemption and growth left out.
std::vector<StartForecast> ForecastStarts(const SchedulerInput& input,
                                          const SchedulerPolicy& policy,
                                          const ForecastLimits& limits = {});

}  // namespace snn
