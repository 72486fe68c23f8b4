// The `drivers:` section of the agent's boards file (docs/drivers.md), and which boards they
// run: a board entry with `driver: NAME` and `board: ID` is run by that driver process, under
// the driver's id for it; the others by the agent's in-process simulator.
//   drivers:
//     ether:
//       command: ["/usr/bin/snn-driver-ether", "--boards=/etc/snn/ether-boards.yaml"]
//       aliases: {SLURM_FPGA_IPS: hosts}   # also set for the task: hosts | endpoints
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "common/base/status.h"

namespace snn {

struct BoardDriverConfig {
  std::vector<std::string> command;
  // Variables a pass-through task gets beside SNN_BOARD_ENDPOINTS, so that a site's tooling
  // runs unchanged: "hosts" (the endpoints' hosts, comma-separated) or "endpoints" (the same
  // list as SNN_BOARD_ENDPOINTS).
  std::map<std::string, std::string> aliases;
};

// Which driver runs a board, and its id there (both empty: the in-process simulator); and the
// device nodes that are the board (`devices: [/dev/xylo-a]`, absolute paths, symlinks allowed):
// only a task holding the board may open them (docs/drivers.md).
struct BoardDriverRef {
  std::string driver;
  std::string board;
  std::vector<std::string> devices;
};

Result<std::map<std::string, BoardDriverConfig>> ParseBoardDrivers(const YAML::Node& node);
// A board entry's `driver` and `board`, checked against the drivers the file declares.
Result<BoardDriverRef> ParseBoardDriverRef(const YAML::Node& board, const std::string& where,
                                           const std::map<std::string, BoardDriverConfig>& drivers);

// The aliases' values for a reservation's endpoints ("udp://127.0.0.5:4000", ...).
std::map<std::string, std::string> DriverAliasEnv(const BoardDriverConfig& driver,
                                                  const std::vector<std::string>& endpoints);

}  // namespace snn
