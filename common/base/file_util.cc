#include "common/base/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace snn {

Result<std::string> ReadWholeFile(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(what + " " + path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgument(what + " " + path + " is a directory");
  }
  // Not a FIFO, a device or /dev/zero: they block or never end.
  if (!std::filesystem::is_regular_file(path, ec)) {
    return InvalidArgument(what + " " + path + " is not a regular file");
  }
  constexpr uintmax_t kMaxBytes = 64 << 20;
  if (const uintmax_t size = std::filesystem::file_size(path, ec); !ec && size > kMaxBytes) {
    return InvalidArgument(what + " " + path + " is " + std::to_string(size >> 20) +
                           " MiB; at most 64 MiB is read");
  }
  std::ifstream in(path);
  if (!in) return InvalidArgument(what + " " + path + " cannot be read (permission denied?)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return InvalidArgument(what + " " + path + ": read error");
  return buffer.str();
}

bool WriteAll(int fd, const std::string& content) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

Status WriteFileAtomic(const std::string& path, const std::string& content, unsigned mode) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Unavailable("cannot write " + tmp + ": " + std::strerror(errno));
  ::fchmod(fd, mode);
  if (!WriteAll(fd, content)) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return Unavailable("cannot write " + tmp + ": " + why);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Unavailable("cannot write " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace snn
