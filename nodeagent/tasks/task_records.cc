#include "nodeagent/tasks/task_records.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/base/file_util.h"

namespace snn {

Status FileTaskRecords::Save(const std::string& file, const v1::AgentTaskRecord& record) {
  const std::string tmp = file + ".tmp";
  // The agent's alone (0600): a record holds the task's gateway token.
  const std::string bytes = record.SerializeAsString();
  unlink(tmp.c_str());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Internal("cannot write the task record " + tmp + ": " + strerror(errno));
  const bool written = WriteAll(fd, bytes);
  close(fd);
  if (!written) return Internal("cannot write the task record " + tmp);
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) return Internal("cannot save the task record " + file + ": " + ec.message());
  return Status::Ok();
}

void FileTaskRecords::Remove(const std::string& file) {
  std::error_code ec;
  std::filesystem::remove(file, ec);
}

std::vector<std::pair<std::string, v1::AgentTaskRecord>> FileTaskRecords::LoadAll(
    const std::string& root) {
  std::vector<std::pair<std::string, v1::AgentTaskRecord>> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) return out;
  for (const auto& dir : std::filesystem::directory_iterator(root, ec)) {
    const std::string file = (dir.path() / "task.pb").string();
    if (!std::filesystem::exists(file, ec)) continue;
    std::ifstream in(file, std::ios::binary);
    v1::AgentTaskRecord record;
    if (!record.ParseFromIstream(&in)) {
      LOG(ERROR) << "ignoring unreadable task record " << file;
      continue;
    }
    out.emplace_back(file, std::move(record));
  }
  return out;
}

}  // namespace snn
