// Removing what tasks' users wrote, as root, without following anything they left there: every
// level opened with O_NOFOLLOW and removed with unlinkat (a link is removed, never followed).
// Thread-compatible.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <string>

namespace snn {

// Removes `name` under the directory `parent_fd`, and everything it holds (at most 64 levels
// deep).
void RemoveTreeAt(int parent_fd, const char* name);

int64_t MtimeMs(const struct stat& st);

// Removes each entry of the directory `root` (the first 10,000) that `stale(root_fd, name)`
// says is stale, logging it as "removing WHAT ROOT/NAME: WHY"; returns how many it removed.
int RemoveStaleEntries(const std::string& root,
                       const std::function<bool(int root_fd, const std::string& name)>& stale,
                       const std::string& what, const std::string& why);

}  // namespace snn
