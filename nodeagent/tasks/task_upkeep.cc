#include "nodeagent/tasks/task_upkeep.h"

#include <set>
#include <utility>

#include "nodeagent/tasks/task_dir_sweep.h"
#include "nodeagent/tasks/task_output.h"

namespace snn {

TaskUpkeep::TaskUpkeep(CheckpointStore& checkpoints, std::string tasks_root, int64_t task_keep_ms)
    : checkpoints_(checkpoints), tasks_root_(std::move(tasks_root)), task_keep_ms_(task_keep_ms) {}

void TaskUpkeep::Run(int64_t now_ms, const std::map<TaskKey, Task>& tasks) {
  if (checkpoints_.enabled() && now_ms - checkpoints_swept_ms_ >= kEveryMs) {
    checkpoints_swept_ms_ = now_ms;
    std::set<std::string> in_use;
    for (const auto& [key, task] : tasks) {
      if (task.ended() || !checkpoints_.Kept(task.launch.request)) continue;
      const CheckpointId id = CheckpointIdOf(task.launch.request);
      checkpoints_.Touch(id, now_ms);  // on a shared root, other nodes sweep
      in_use.insert(checkpoints_.DirFor(id));
    }
    checkpoints_.Sweep(now_ms, in_use);
  }
  if (task_keep_ms_ > 0 && now_ms - task_dirs_swept_ms_ >= kEveryMs) {
    task_dirs_swept_ms_ = now_ms;
    std::set<std::string> in_use;
    for (const auto& [key, task] : tasks) {
      const v1::LaunchRequest& req = task.launch.request;
      in_use.insert(TaskDirName(req.tenant(), req.tenant_job_id(), req.index(), req.attempt()));
    }
    SweepTaskDirs(tasks_root_, now_ms, task_keep_ms_, in_use);
  }
}

}  // namespace snn
