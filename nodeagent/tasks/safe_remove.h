// Removing what tasks' users wrote, as root, without following anything they left there: every
// level opened with O_NOFOLLOW and removed with unlinkat (a link is removed, never followed).
// Thread-compatible.
#pragma once

#include <sys/stat.h>

#include <cstdint>

namespace snn {

// Removes `name` under the directory `parent_fd`, and everything it holds (at most 64 levels
// deep).
void RemoveTreeAt(int parent_fd, const char* name);

int64_t MtimeMs(const struct stat& st);

}  // namespace snn
