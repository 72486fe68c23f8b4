// snnctl results JOBID [--task N] [--out DIR]: the files a task left in its output directory
// ($SNN_OUTPUT_DIR) and where they came from (job, task, attempt, node, board, model, state);
// with --out, every file fetched into DIR (subdirectories kept) beside provenance.json.
#pragma once

#include <ostream>

#include "cli/cli_options.h"

namespace snn {

int Results(const CliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace snn
