#include "nodeagent/tasks/task_results.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "common/base/split.h"
#include "nodeagent/tasks/task_output.h"

namespace snn {
namespace {

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

void List(int dir_fd, const std::string& prefix, uid_t owner, int depth,
          google::protobuf::RepeatedPtrField<v1::ResultFile>* out) {
  const int copy = dup(dir_fd);
  if (copy < 0) return;
  DIR* dir = fdopendir(copy);
  if (dir == nullptr) {
    close(copy);
    return;
  }
  while (const dirent* entry = readdir(dir)) {
    if (out->size() >= kMaxResultFiles) break;
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (st.st_uid != owner) continue;
    if (S_ISREG(st.st_mode)) {
      v1::ResultFile* file = out->Add();
      file->set_name(prefix + name);
      file->set_size(static_cast<uint64_t>(st.st_size));
      file->set_mtime_ms(static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 +
                         st.st_mtim.tv_nsec / 1000000);
    } else if (S_ISDIR(st.st_mode) && depth < kMaxResultDepth) {
      Fd sub(openat(dir_fd, name.c_str(), kDirFlags));
      if (sub.fd >= 0) List(sub.fd, prefix + name + "/", owner, depth + 1, out);
    }
  }
  closedir(dir);
}

Status BadName(const std::string& name) {
  return InvalidArgument("'" + name.substr(0, 200) +
                         "' is not a result's name: a path under the output directory, as "
                         "snnctl results lists them");
}

}  // namespace

Result<v1::TaskOutputResponse> ReadTaskResults(const std::string& data_dir,
                                               const v1::TaskOutputRequest& request) {
  auto task_dir = TaskDirOf(data_dir, request);
  if (!task_dir.ok()) return task_dir.status();
  const std::string path = *task_dir + "/output";
  Fd root(open(path.c_str(), kDirFlags));
  if (root.fd < 0) {
    if (errno == ENOENT) {
      return NotFound("task " + std::to_string(request.index()) + " (attempt " +
                      std::to_string(request.attempt()) +
                      ") has no output directory on this node: it never started here, or its "
                      "files were removed");
    }
    return Internal("cannot open the task's output directory: " + std::string(strerror(errno)));
  }
  struct stat st {};
  if (fstat(root.fd, &st) != 0) return Internal("cannot stat the task's output directory");
  const uid_t owner = st.st_uid;
  v1::TaskOutputResponse out;
  if (request.list_results()) {
    List(root.fd, "", owner, 1, out.mutable_results());
    std::sort(out.mutable_results()->begin(), out.mutable_results()->end(),
              [](const v1::ResultFile& a, const v1::ResultFile& b) { return a.name() < b.name(); });
    return out;
  }
  // Each component opened without following a link, so the path cannot leave the directory.
  const std::vector<std::string> parts = SplitList(request.result(), '/', /*keep_empty=*/true);
  if (request.result().empty() || parts.size() > kMaxResultDepth) return BadName(request.result());
  int at = root.fd;
  std::vector<std::unique_ptr<Fd>> opened;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.empty() || part == "." || part == "..") return BadName(request.result());
    const bool last = i + 1 == parts.size();
    const int fd =
        openat(at, part.c_str(), last ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC : kDirFlags);
    if (fd < 0) {
      if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR) {
        return NotFound("the task left no file '" + request.result().substr(0, 200) + "'");
      }
      return Internal("cannot open '" + request.result().substr(0, 200) +
                      "': " + std::string(strerror(errno)));
    }
    opened.push_back(std::make_unique<Fd>(fd));
    at = fd;
  }
  if (fstat(at, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != owner) {
    return NotFound("the task left no file '" + request.result().substr(0, 200) + "'");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  out.set_size(size);
  if (request.offset() < size) {
    const uint64_t want =
        std::min<uint64_t>({request.max_bytes() == 0 ? kMaxOutputSliceBytes : request.max_bytes(),
                            kMaxOutputSliceBytes, size - request.offset()});
    std::string data(want, '\0');
    const ssize_t n = pread(at, data.data(), want, static_cast<off_t>(request.offset()));
    if (n < 0) return Internal("cannot read '" + request.result().substr(0, 200) + "'");
    data.resize(static_cast<size_t>(n));
    out.set_data(std::move(data));
  }
  return out;
}

}  // namespace snn
