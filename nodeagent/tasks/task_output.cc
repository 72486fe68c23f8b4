#include "nodeagent/tasks/task_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace snn {

std::string TaskDirName(const std::string& tenant, uint64_t tenant_job_id, uint32_t index,
                        uint32_t attempt) {
  return tenant + ".job" + std::to_string(tenant_job_id) + ".task" + std::to_string(index) +
         ".try" + std::to_string(attempt);
}

Result<std::string> TaskDirOf(const std::string& data_dir, const v1::TaskOutputRequest& request) {
  if (request.tenant().empty() || request.tenant().find('/') != std::string::npos ||
      request.tenant().front() == '.') {
    return InvalidArgument("a task output request names no valid tenant");
  }
  return data_dir + "/tasks/" +
         TaskDirName(request.tenant(), request.tenant_job_id(), request.index(), request.attempt());
}

Result<v1::TaskOutputResponse> ReadTaskOutput(const std::string& data_dir,
                                              const v1::TaskOutputRequest& request) {
  const std::string stream = request.stderr() ? "stderr" : "stdout";
  auto dir = TaskDirOf(data_dir, request);
  if (!dir.ok()) return dir.status();
  const std::string path = *dir + "/" + stream;
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) {
      return NotFound("no " + stream + " of task " + std::to_string(request.index()) +
                      " (attempt " + std::to_string(request.attempt()) +
                      ") on this node: it never started here, or its files were removed");
    }
    return Internal("cannot open the task's " + stream + ": " + std::strerror(errno));
  }
  v1::TaskOutputResponse out;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Internal("the task's " + stream + " is not a regular file");
  }
  out.set_size(static_cast<uint64_t>(st.st_size));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (request.offset() < size) {
    const uint32_t want =
        std::min<uint64_t>({request.max_bytes() == 0 ? kMaxOutputSliceBytes : request.max_bytes(),
                            kMaxOutputSliceBytes, size - request.offset()});
    std::string data(want, '\0');
    const ssize_t n = pread(fd, data.data(), want, static_cast<off_t>(request.offset()));
    if (n < 0) {
      close(fd);
      return Internal("cannot read the task's " + stream + ": " + std::strerror(errno));
    }
    data.resize(static_cast<size_t>(n));
    out.set_data(std::move(data));
  }
  close(fd);
  return out;
}

}  // namespace snn
