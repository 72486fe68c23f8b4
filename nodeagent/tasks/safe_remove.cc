#include "nodeagent/tasks/safe_remove.h"

#include <dirent.h>
#include <fcntl.h>
#include <glog/logging.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

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

int RemoveStaleEntries(const std::string& root,
                       const std::function<bool(int root_fd, const std::string& name)>& stale,
                       const std::string& what, const std::string& why) {
  constexpr int kMaxEntries = 10'000;
  const int root_fd = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root_fd < 0) return 0;
  const int listing = dup(root_fd);
  DIR* d = listing >= 0 ? fdopendir(listing) : nullptr;
  if (d == nullptr) {
    if (listing >= 0) close(listing);
    close(root_fd);
    return 0;
  }
  std::vector<std::string> found;
  int seen = 0;
  while (const dirent* e = readdir(d)) {
    if (++seen > kMaxEntries) break;
    const std::string name = e->d_name;
    if (name != "." && name != ".." && stale(root_fd, name)) found.push_back(name);
  }
  closedir(d);
  for (const std::string& name : found) {
    LOG(INFO) << "removing " << what << " " << root << "/" << name << ": " << why;
    RemoveTreeAt(root_fd, name.c_str());
  }
  close(root_fd);
  return static_cast<int>(found.size());
}

}  // namespace snn
