#include "nodeagent/tasks/task_dir_sweep.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "nodeagent/tasks/safe_remove.h"

namespace snn {
namespace {

// "<tenant>.job<N>.task<I>.try<A>", as TaskDirName makes them: anything else is not ours.
bool IsTaskDirName(const std::string& name) {
  const size_t job = name.find(".job"), task = name.rfind(".task"), attempt = name.rfind(".try");
  if (job == std::string::npos || job == 0 || task == std::string::npos ||
      attempt == std::string::npos || !(job < task && task < attempt)) {
    return false;
  }
  auto digits = [&](size_t from, size_t to) {
    if (from >= to) return false;
    for (size_t i = from; i < to; ++i) {
      if (name[i] < '0' || name[i] > '9') return false;
    }
    return true;
  };
  return digits(job + 4, task) && digits(task + 5, attempt) && digits(attempt + 4, name.size());
}

}  // namespace

int SweepTaskDirs(const std::string& tasks_root, int64_t now_ms, int64_t keep_ms,
                  const std::set<std::string>& in_use) {
  return RemoveStaleEntries(
      tasks_root,
      [&](int root_fd, const std::string& name) {
        if (!IsTaskDirName(name) || in_use.count(name)) return false;
        struct stat st {};
        if (fstatat(root_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
            now_ms - MtimeMs(st) <= keep_ms) {
          return false;
        }
        // A record still there: the master has not acknowledged the task's end.
        struct stat record {};
        return fstatat(root_fd, (name + "/task.pb").c_str(), &record, AT_SYMLINK_NOFOLLOW) != 0;
      },
      "task directory", "its task ended longer ago than --task_keep");
}

}  // namespace snn
