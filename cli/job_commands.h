// snnctl's commands that make and read jobs: submit (reading the job file and its model as the
// user running snnctl), jobs, show, and estimate (a model's cores and spike rate).
#pragma once

#include <ostream>

#include "cli/cli_options.h"

namespace snn {

int Submit(const CliOptions& o, std::ostream& out, std::ostream& err);
int Jobs(const CliOptions& o, std::ostream& out, std::ostream& err);
int Show(const CliOptions& o, std::ostream& out, std::ostream& err);
int Estimate(const CliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace snn
