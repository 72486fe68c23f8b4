// How many jobs started later than their fair start time (Sabin & Sadayappan, "Unfairness
// metrics for space-sharing parallel job schedulers", JSSPP 2005): the start a job would have
// had if no job submitted after it existed. Their definition replays the scheduler once per job;
// this approximation computes it from the replay's outcome instead, at each job's submit: the
// jobs running then keep their processors until their actual end, and the jobs waiting then,
// this one last, start in order of arrival (none before one that came earlier), each at the
// earliest such time its processors are free for its actual run time. So a job is late when
// jobs that came after it started before it and pushed it back; FCFS has none, by construction.
// A job that started at its submit is never late. Cost: per job that waited, the jobs running
// and waiting at its submit.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/replay.h"

namespace snn {

struct FairStartFigures {
  uint64_t late = 0;      // jobs that started after their fair start time
  uint64_t waited = 0;    // jobs that did not start at their submit (the ones evaluated)
  double late_share = 0;  // late / all jobs
};

FairStartFigures FairStarts(const std::vector<JobOutcome>& jobs, uint32_t max_procs);

}  // namespace snn
