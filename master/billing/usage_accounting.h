// Spike usage accounting: the agent reports each task's counters (cumulative for the attempt,
// restarting from zero if the agent restarted); the task record keeps its totals and the job
// record the sum over every attempt of every task. Pure; thread-compatible.
#pragma once

#include "proto/job.pb.h"

namespace snn {

// Takes one report for `task` of `job`; returns true if anything changed.
bool AddTaskUsage(v1::JobRecord& job, v1::TaskRecord& task, const v1::SpikeUsage& reported);

}  // namespace snn
