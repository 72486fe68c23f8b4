#include "nodeagent/tasks/task_dir_sweep.h"

#include <dirent.h>
#include <fcntl.h>
#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "nodeagent/tasks/safe_remove.h"

namespace snn {
namespace {

constexpr int kMaxEntries = 10'000;

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
  const int root = open(tasks_root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root < 0) return 0;
  const int listing = dup(root);
  DIR* d = listing >= 0 ? fdopendir(listing) : nullptr;
  if (d == nullptr) {
    if (listing >= 0) close(listing);
    close(root);
    return 0;
  }
  std::vector<std::string> stale;
  int seen = 0;
  while (const dirent* e = readdir(d)) {
    if (++seen > kMaxEntries) break;
    const std::string name = e->d_name;
    if (!IsTaskDirName(name) || in_use.count(name)) continue;
    struct stat st {};
    if (fstatat(root, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
      continue;
    }
    if (now_ms - MtimeMs(st) <= keep_ms) continue;
    // A record still there: the master has not acknowledged the task's end.
    struct stat record {};
    if (fstatat(root, (name + "/task.pb").c_str(), &record, AT_SYMLINK_NOFOLLOW) == 0) continue;
    stale.push_back(name);
  }
  closedir(d);
  for (const std::string& name : stale) {
    LOG(INFO) << "removing task directory " << tasks_root << "/" << name
              << ": its task ended longer ago than --task_keep";
    RemoveTreeAt(root, name.c_str());
  }
  close(root);
  return static_cast<int>(stale.size());
}

}  // namespace snn
