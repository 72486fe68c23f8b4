// How long a task's directory stays on the node after the task: its stdout and stderr (snnctl
// logs), its results ($SNN_OUTPUT_DIR, snnctl results), its files. SweepTaskDirs removes the
// directories of tasks that ended longer ago than the keep time (snn-agent --task_keep): those
// the agent no longer holds (running, or ended and not yet acknowledged by the master), holding
// no task record, and unchanged for that long. A directory changes last when the master
// acknowledges the task's end (its record is removed then), so its age is the time since the
// task ended. Removal never follows a link a task left (nodeagent/tasks/safe_remove.h).
// Thread-compatible; blocking file operations.
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace snn {

// Removes the stale task directories under `tasks_root` (DATA_DIR/tasks), except those named in
// `in_use`; returns how many it removed. At most 10,000 entries are looked at per call.
int SweepTaskDirs(const std::string& tasks_root, int64_t now_ms, int64_t keep_ms,
                  const std::set<std::string>& in_use);

}  // namespace snn
