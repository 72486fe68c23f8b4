// snnctl's command line: the options every command reads (parsed from argv and the
// environment), and RunCli, which runs the command they name (cli/command_table.h lists them).
// Kept apart from main() so tests can run commands and read what they print.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/cli_options.h"
#include "common/base/status.h"

namespace snn {

Result<CliOptions> ParseCliArgs(const std::vector<std::string>& argv);

// Runs the command; returns the exit code. Errors go to `err` as one line each.
int RunCli(const CliOptions& options, std::ostream& out, std::ostream& err);

}  // namespace snn
