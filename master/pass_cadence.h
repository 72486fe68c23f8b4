// When the master's next scheduling pass may run. Events (a submit, a task that ended, a node
// that came back) ask for a pass; a pass then runs as soon as the cadence allows, and one pass
// answers every request made before it started. The cadence caps the share of the io thread
// that passes take: after a pass that took d, the next waits until the io thread has had
// d x (1 - max_busy) / max_busy for everything else (requests, reports, commits), so a queue
// of 100,000 jobs makes passes rarer, not submits slower; and a small queue, whose passes take
// microseconds, is scheduled almost at once.
// The durations are real (they measure the io thread's work, which an injected clock cannot
// tell), so the wait is real time too; it decides only how soon, never whether, a pass runs.
// Pure and thread-compatible: the caller measures and waits.
#pragma once

#include <cstdint>

namespace snn {

struct PassCadenceOptions {
  double max_busy = 0.25;  // the largest share of the io thread passes may take, (0, 1]
  int64_t min_gap_us = 0;  // and at least this between the end of one pass and the next
};

class PassCadence {
 public:
  explicit PassCadence(PassCadenceOptions options = {});

  // A pass ended at `end_us` (monotonic microseconds) after running for `took_us`.
  void PassRan(int64_t end_us, int64_t took_us);
  // How long from `now_us` until the next pass may start (0: now).
  int64_t WaitUs(int64_t now_us) const;

 private:
  PassCadenceOptions options_;
  int64_t next_allowed_us_ = 0;
};

}  // namespace snn
