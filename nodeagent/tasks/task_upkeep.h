// The sweeps the task manager makes every 10 minutes of its polls: the checkpoint directories
// of running tasks touched (on a root shared by nodes, the others sweep by age) and stale ones
// removed (nodeagent/tasks/task_checkpoints.h); the directories of tasks that ended longer ago
// than the keep time removed (nodeagent/tasks/task_dir_sweep.h).
// Thread contract: agent io thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "nodeagent/tasks/task.h"
#include "nodeagent/tasks/task_checkpoints.h"

namespace snn {

class TaskUpkeep {
 public:
  // `tasks_root`: DATA_DIR/tasks; `task_keep_ms` 0: task directories are kept.
  TaskUpkeep(CheckpointStore& checkpoints, std::string tasks_root, int64_t task_keep_ms);

  // Sweeps what is due, sparing what `tasks` (the tasks the agent holds) still use.
  void Run(int64_t now_ms, const std::map<TaskKey, Task>& tasks);

 private:
  static constexpr int64_t kEveryMs = 10 * 60 * 1000;

  CheckpointStore& checkpoints_;
  const std::string tasks_root_;
  const int64_t task_keep_ms_;
  int64_t checkpoints_swept_ms_ = 0;
  int64_t task_dirs_swept_ms_ = 0;
};

}  // namespace snn
