// Reading small configuration files whole. Pure apart from the read; thread-safe.
#pragma once

#include <string>

#include "common/base/status.h"

namespace snn {

// The file's contents; kNotFound if it does not exist, kInvalidArgument for a directory, a file
// that is not a regular file (a FIFO, a device), one over 64 MiB, or one that cannot be read.
// `what` names the file in messages ("the boards file").
Result<std::string> ReadWholeFile(const std::string& path, const std::string& what);

// Writes all of `content` to `fd`, retrying short writes and EINTR; false (errno set) if it
// cannot.
bool WriteAll(int fd, const std::string& content);
// Reads exactly `size` bytes from `fd` into `data`, retrying short reads and EINTR; false at
// the end of the stream or an error.
bool ReadAll(int fd, char* data, size_t size);

// Writes `content` to a temporary file beside `path` with `mode`, syncs it and renames it over
// `path`: a reader sees the old file or the new one, never a part.
Status WriteFileAtomic(const std::string& path, const std::string& content, unsigned mode);

}  // namespace snn
