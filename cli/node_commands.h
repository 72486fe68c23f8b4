// snnctl's commands on nodes and boards: pool status, node token (a join token), node wait,
// node and board drain/resume, and fault injection on simulated boards (sim ...).
#pragma once

#include <ostream>
#include <string>

#include "cli/cli_options.h"

namespace snn {

int Pool(const CliOptions& o, std::ostream& out, std::ostream& err);
int NodeToken(const CliOptions& o, std::ostream& out, std::ostream& err);
int NodeAdd(const CliOptions& o, std::ostream& out, std::ostream& err);
int NodeRevoke(const CliOptions& o, std::ostream& out, std::ostream& err);
int NodeWait(const CliOptions& o, std::ostream& out, std::ostream& err);
// "node1/2", or "node1/board2" as reasons and job details print it: the node and the board.
bool ParseBoardRef(const std::string& text, std::string& node, uint32_t& board);
// `node drain|resume NODE` and `board drain|resume NODE/BOARD`.
int Drain(const CliOptions& o, std::ostream& out, std::ostream& err);
// `board mark NODE/BOARD NAME=VALUE...` and `board unmark NODE/BOARD NAME...`.
int BoardMark(const CliOptions& o, std::ostream& out, std::ostream& err);
// `sim kill-core|fail-board|slow-board|heal-board ...`.
int Sim(const CliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace snn
