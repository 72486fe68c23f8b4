#include "nodeagent/tasks/task_checkpoints.h"

#include <dirent.h>
#include <fcntl.h>
#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nodeagent/tasks/safe_remove.h"

namespace snn {
namespace {

constexpr int kMaxEntries = 10'000;

// "<tenant>.job<digits>.task<digits>", the tenant a name (letters, digits, '-', '_', '.'); or
// "job<digits>.task<digits>", as agents before per-tenant names left them (swept the same way).
bool IsCheckpointName(const std::string& name) {
  size_t end = name.size();
  auto digits_before = [&] {  // moves `end` back over digits
    const size_t to = end;
    while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
    return end < to;
  };
  auto word_before = [&](std::string_view word) {
    if (end < word.size() || name.compare(end - word.size(), word.size(), word) != 0) return false;
    end -= word.size();
    return true;
  };
  if (!digits_before() || !word_before(".task") || !digits_before()) return false;
  if (end == 3 && name.compare(0, 3, "job") == 0) return true;  // the older name
  if (!word_before(".job") || end == 0) return false;
  for (size_t i = 0; i < end; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (!(isalnum(c) || c == '-' || c == '_' || c == '.')) return false;
  }
  return true;
}

std::string NameOf(const CheckpointId& id) {
  return id.tenant + ".job" + std::to_string(id.tenant_job_id) + ".task" + std::to_string(id.index);
}

}  // namespace

std::string CheckpointStore::DirFor(const CheckpointId& id) const {
  return root_ + "/" + NameOf(id);
}

Status CheckpointStore::Prepare(const CheckpointId& id, const RunAs& who) const {
  // The root: the agent's, passed through but not listed by tasks.
  if (mkdir(root_.c_str(), 0711) != 0 && errno != EEXIST) {
    return Internal("cannot create the checkpoint directory " + root_ + ": " +
                    std::strerror(errno));
  }
  const std::string dir = DirFor(id);
  const bool created = mkdir(dir.c_str(), 0700) == 0;
  if (!created && errno != EEXIST) {
    return Internal("cannot create " + dir + ": " + std::strerror(errno));
  }
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return FailedPrecondition(
        dir + " is not a directory (a link or a file is in its place): " + std::strerror(errno));
  }
  struct stat st;
  Status s = Status::Ok();
  if (fstat(fd, &st) != 0) {
    s = Internal("cannot read " + dir + ": " + std::strerror(errno));
  } else if (created) {
    if (who.switch_user && fchown(fd, who.uid, who.gid) != 0) {
      s = Internal("cannot give " + dir + " to uid " + std::to_string(who.uid) + ": " +
                   std::strerror(errno) + " (a shared checkpoint root must let root chown)");
    }
  } else if (st.st_uid != (who.switch_user ? who.uid : geteuid())) {
    s = FailedPrecondition(dir + " belongs to uid " + std::to_string(st.st_uid) + ", not to uid " +
                           std::to_string(who.uid) + " who runs the job: remove it");
  }
  close(fd);
  return s;
}

v1::Checkpoint CheckpointStore::Latest(const CheckpointId& id) const {
  v1::Checkpoint latest;
  const std::string dir = DirFor(id);
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return latest;
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    close(fd);
    return latest;
  }
  int seen = 0;
  while (const dirent* e = readdir(d)) {
    if (++seen > kMaxEntries) break;
    struct stat st;
    if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    const int64_t mtime = MtimeMs(st);
    if (mtime > latest.mtime_ms() || (mtime == latest.mtime_ms() && e->d_name > latest.file())) {
      latest.set_file(e->d_name);
      latest.set_mtime_ms(mtime);
      latest.set_bytes(static_cast<uint64_t>(st.st_size));
    }
  }
  closedir(d);
  if (!latest.file().empty()) latest.set_dir(dir);
  return latest;
}

void CheckpointStore::Remove(const CheckpointId& id) const {
  const int root = open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root < 0) return;
  const std::string name = NameOf(id);
  RemoveTreeAt(root, name.c_str());
  close(root);
}

void CheckpointStore::Touch(const CheckpointId& id, int64_t now_ms) const {
  const timespec times[2] = {{now_ms / 1000, (now_ms % 1000) * 1'000'000},
                             {now_ms / 1000, (now_ms % 1000) * 1'000'000}};
  utimensat(AT_FDCWD, DirFor(id).c_str(), times, AT_SYMLINK_NOFOLLOW);
}

int CheckpointStore::Sweep(int64_t now_ms, const std::set<std::string>& in_use) const {
  return RemoveStaleEntries(
      root_,
      [&](int root_fd, const std::string& name) {
        if (!IsCheckpointName(name) || in_use.count(root_ + "/" + name)) return false;
        struct stat st;
        if (fstatat(root_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
        return now_ms - MtimeMs(st) > keep_ms_;
      },
      "checkpoint directory", "untouched for longer than the keep time");
}

}  // namespace snn
