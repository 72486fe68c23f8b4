// Reads the agent's boards file (YAML; see etc/boards/*.yaml) into board descriptions.
// Pure apart from reading the file; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/base/status.h"
#include "common/daemon/board_drivers.h"
#include "proto/node.pb.h"

namespace snn {

// What a task on a board of one type needs from the host: environment variables, and library
// directories put in front of its LD_LIBRARY_PATH.
struct BoardRuntime {
  std::map<std::string, std::string> env;
  std::vector<std::string> library_paths;
};

struct BoardsFile {
  std::string backend = "sim";
  std::vector<v1::BoardInfo> boards;
  std::map<std::string, BoardRuntime> runtimes;  // by board type
  // Topology: the node's switch, and links from its boards (to_node empty: on this node).
  std::string switch_name;
  std::vector<v1::BoardLink> links;
  // Driver processes (docs/drivers.md), and per board (in the order of `boards`) which one runs
  // it; a board with none is simulated in the agent.
  std::map<std::string, BoardDriverConfig> drivers;
  std::vector<BoardDriverRef> board_drivers;
};

// Every problem is reported with the board's position and the field at fault.
Result<BoardsFile> LoadBoardsFile(const std::string& path);
Result<BoardsFile> ParseBoardsYaml(const std::string& text);

}  // namespace snn
