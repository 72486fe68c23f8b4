// Reads the agent's boards file (YAML; see etc/boards/*.yaml) into board descriptions.
// Pure apart from reading the file; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "proto/node.pb.h"

namespace snn {

struct BoardsFile {
  std::string backend = "sim";
  std::vector<v1::BoardInfo> boards;
};

// Every problem is reported with the board's position and the field at fault.
Result<BoardsFile> LoadBoardsFile(const std::string& path);
Result<BoardsFile> ParseBoardsYaml(const std::string& text);

}  // namespace snn
