// What the task manager tests share: one simulated 4x4 sim-v1 board (1000 ksps, 4 streams) and
// the options of an agent "n1" on a data dir, with the real shepherd.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nodeagent/hal/sim_board.h"
#include "nodeagent/tasks/task_manager.h"
#include "snn_paths.h"

namespace snn::testing {

inline std::vector<std::unique_ptr<Board>> OneSimBoard() {
  v1::BoardInfo info;
  info.set_type("sim-v1");
  info.set_width(4);
  info.set_height(4);
  info.set_ksps(1000);
  info.set_streams(4);
  std::vector<std::unique_ptr<Board>> boards;
  boards.push_back(std::make_unique<SimBoard>(info));
  return boards;
}

inline TaskManagerOptions AgentOptions(const std::string& data_dir) {
  TaskManagerOptions options;
  options.data_dir = data_dir;
  options.node_name = "n1";
  options.shepherd = SNN_SHEPHERD_BIN;
  options.base_env = {{"PATH", "/usr/bin:/bin"}};
  options.allow_root_tasks = true;  // the tests' jobs are root's
  return options;
}

}  // namespace snn::testing
