// When the master's next scheduling pass may run. Events (a submit, a task that ended, a node
// that came back) ask for a pass; a pass then runs as soon as the cadence allows, and one pass
// answers every request made before it started. The cadence caps the share of the io thread
// that passes take: after a pass that took d, the next waits until the io thread has had
// d x (1 - max_busy) / max_busy for everything else (requests, reports, commits), so a queue
// of 100,000 jobs makes passes rarer, not submits slower; and a small queue, whose passes take
// microseconds, is scheduled almost at once.
// The durations are real (they measure the io thread's work, which an injected clock cannot
// tell), so the wait is real time too; it decides only how soon, never whether, a pass runs.
// A deep queue also makes most passes quick: with more than `quick_depth` jobs pending, a pass
// considers only the head of the queue (see SchedulingDriver::RunSchedulingPass), and a full pass
// runs once `full_interval_us` has passed since the last one, so what a pass costs between two
// full ones depends on what changed, not on the queue's depth (Slurm's main scheduler and its
// backfill interval, in one loop).
// Pure and thread-compatible: the caller measures and waits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace snn {

struct PassCadenceOptions {
  double max_busy = 0.25;              // the largest share of the io thread passes may take, (0, 1]
  int64_t min_gap_us = 0;              // and at least this between the end of one pass and the next
  size_t quick_depth = 1000;           // 0: every pass is full
  int64_t full_interval_us = 1000000;  // the longest time between two full passes
};

class PassCadence {
 public:
  explicit PassCadence(PassCadenceOptions options = {});

  // A pass ended at `end_us` (monotonic microseconds) after running for `took_us`; `full`: it
  // considered every pending job.
  void PassRan(int64_t end_us, int64_t took_us, bool full = true);
  // How long from `now_us` until the next pass may start (0: now).
  int64_t WaitUs(int64_t now_us) const;
  // How deep the pass starting at `now_us` looks, with `pending` jobs waiting: 0 for a full
  // pass, else the number of jobs at the head of the queue it considers.
  size_t DepthAt(int64_t now_us, size_t pending) const;
  // How long from `now_us` until a full pass is due (0: now).
  int64_t FullDueInUs(int64_t now_us) const;

 private:
  PassCadenceOptions options_;
  int64_t next_allowed_us_ = 0;
  int64_t last_full_us_ = INT64_MIN;  // when the last full pass ended
};

}  // namespace snn
