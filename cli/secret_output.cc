#include "cli/secret_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace snn {

// Writes `text` to `path` readable by its owner only: a new file of mode 0600 beside it, then
// renamed over it (an older, wider file of that name is replaced, not reused).
Status WritePrivateFile(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp" + std::to_string(getpid());
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot create " + temp + ": " + std::strerror(errno));
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                       fchmod(fd, 0600) == 0 && fsync(fd) == 0;
  const int saved = errno;
  close(fd);
  if (!written || rename(temp.c_str(), path.c_str()) != 0) {
    const int why = written ? errno : saved;
    unlink(temp.c_str());
    return Unavailable("cannot write " + path + ": " + std::strerror(why));
  }
  return Status::Ok();
}

// `snnctl token create > FILE`: the shell made FILE with its umask (often 0644). A token in a
// file others can read is anyone's, so such a file of ours is narrowed to 0600, saying so.
void NarrowRedirectedOutput(std::ostream& err) {
  struct stat st {};
  if (fstat(STDOUT_FILENO, &st) != 0 || !S_ISREG(st.st_mode)) return;
  if ((st.st_mode & 077) == 0 || st.st_uid != geteuid()) return;
  if (fchmod(STDOUT_FILENO, st.st_mode & 0700) == 0) {
    err << "snnctl: the file standard output goes to was readable by others: now mode 0600\n";
  }
}

}  // namespace snn
