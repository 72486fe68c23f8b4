// snnctl's commands on jobs already submitted: cancel, hold, release and requeue (each on one
// or more job IDs), logs (a task's output, -f to follow it), and the wait of `submit --wait`.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "cli/cli_options.h"
#include "common/base/status.h"
#include "proto/job.pb.h"

namespace snn {

// The exit code of an ended job as snnctl gives it: 0 if it completed, its exit code if it
// failed (1 if it has none), 124 at its time limit (as timeout(1)), 125 if cancelled.
int ExitCodeOf(const v1::JobRecord& job);

// A job ID as typed: a positive number.
Result<uint64_t> ParseJobId(const std::string& text);
// A job, or an array's elements: "7", "7_5", "7_[100-200]".
Result<v1::JobRef> ParseJobRef(const std::string& text);

int Cancel(const CliOptions& o, std::ostream& out, std::ostream& err);
// `hold JOBID...` or `release JOBID...` (o.args[0] says which).
int HoldOrRelease(const CliOptions& o, std::ostream& out, std::ostream& err);
int Requeue(const CliOptions& o, std::ostream& out, std::ostream& err);
// `logs JOBID [--task N] [--stderr] [-f]`: the task's stdout (or stderr) as it stands; with
// -f, then what it writes, until the job ends.
int Logs(const CliOptions& o, std::ostream& out, std::ostream& err);

// Polls a submitted job until it ends; returns its ExitCodeOf.
int WaitForEnd(const CliOptions& o, const v1::SubmitResponse& submitted, std::ostream& out,
               std::ostream& err);

}  // namespace snn
