#include "nodeagent/tasks/safe_remove.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace snn {
namespace {

constexpr int kMaxDepth = 64;

void RemoveAt(int parent_fd, const char* name, int depth) {
  if (unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT) return;
  if (depth > kMaxDepth) return;
  const int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    close(fd);
    return;
  }
  while (const dirent* e = readdir(dir)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    RemoveAt(fd, e->d_name, depth + 1);
  }
  closedir(dir);  // closes fd
  unlinkat(parent_fd, name, AT_REMOVEDIR);
}

}  // namespace

void RemoveTreeAt(int parent_fd, const char* name) { RemoveAt(parent_fd, name, 0); }

int64_t MtimeMs(const struct stat& st) {
  return int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

}  // namespace snn
