#include "nodeagent/tasks/task_sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/base/file_util.h"

namespace snn {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

Status Own(int fd, const std::string& path, const RunAs& who, mode_t mode) {
  if (who.switch_user && fchown(fd, who.uid, who.gid) != 0) {
    return Internal(Errno("cannot give " + path + " to uid " + std::to_string(who.uid)));
  }
  if (fchmod(fd, mode) != 0) return Internal(Errno("cannot set the mode of " + path));
  return Status::Ok();
}

}  // namespace

Result<RunAs> ResolveRunAs(const v1::LaunchRequest& req, const RunAsPolicy& policy) {
  RunAs who;
  if (geteuid() != 0) {  // an unprivileged agent (a developer's): tasks run as it does
    who.uid = geteuid();
    who.gid = getegid();
    if (const passwd* pw = getpwuid(who.uid)) {
      who.user = pw->pw_name;
      who.home = pw->pw_dir;
      who.shell = pw->pw_shell;
    }
    return who;
  }
  const std::string job =
      "job " + std::to_string(req.tenant_job_id()) + " of tenant " + req.tenant();
  if (req.uid() == 0 && !policy.allow_root) {
    return Status(Code::kPermissionDenied,
                  job + " was submitted by root; node " + policy.node_name +
                      " does not run tasks as root (start snn-agent with --allow_root_tasks to "
                      "allow it)");
  }
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(req.uid(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return Status(Code::kPermissionDenied, job + ": its user (uid " + std::to_string(req.uid()) +
                                               (req.user().empty() ? "" : ", " + req.user()) +
                                               ") has no account on node " + policy.node_name);
  }
  if (!req.user().empty() && req.user() != found->pw_name) {
    return Status(Code::kPermissionDenied,
                  job + ": uid " + std::to_string(req.uid()) + " is '" + found->pw_name +
                      "' on node " + policy.node_name + " but '" + req.user() +
                      "' on the master; the nodes and the master must share one user database");
  }
  who.uid = req.uid();
  who.gid = req.gid();
  who.user = found->pw_name;
  who.home = found->pw_dir;
  who.shell = found->pw_shell;
  who.switch_user = true;
  int n = 64;
  std::vector<gid_t> groups(n);
  if (getgrouplist(found->pw_name, who.gid, groups.data(), &n) < 0) {
    groups.resize(n);
    getgrouplist(found->pw_name, who.gid, groups.data(), &n);
  }
  groups.resize(n);
  who.groups = std::move(groups);
  return who;
}

std::vector<std::string> ShepherdUserArgs(const RunAs& who) {
  std::string groups;
  for (gid_t g : who.groups) groups += (groups.empty() ? "" : ",") + std::to_string(g);
  return {"--user", std::to_string(who.uid), std::to_string(who.gid),
          groups.empty() ? "-" : groups};
}

Status PrepareTaskDir(const std::string& dir, const RunAs& who) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir + ": " + ec.message());
  // Tasks may pass through to their own directory, never list the others.
  const std::string parent = std::filesystem::path(dir).parent_path().string();
  for (const std::string& d : {parent, dir}) {
    if (chmod(d.c_str(), 0711) != 0) return Internal(Errno("cannot set the mode of " + d));
  }
  return PrepareOutputDir(dir + "/work", who);
}

Status PrepareOutputDir(const std::string& path, const RunAs& who) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);  // an earlier run's: links are removed, not followed
  if (mkdir(path.c_str(), 0700) != 0) return Internal(Errno("cannot create " + path));
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Internal(Errno("cannot open " + path));
  Status s = Own(fd, path, who, 0700);
  close(fd);
  return s;
}

Status WritePrivateFile(const std::string& path, const std::string& content, const RunAs& who,
                        mode_t mode) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT)
    return Internal(Errno("cannot replace " + path));
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Internal(Errno("cannot create " + path));
  if (!WriteAll(fd, content)) {
    const Status s = Internal(Errno("cannot write " + path));
    close(fd);
    return s;
  }
  Status s = Own(fd, path, who, mode);
  close(fd);
  return s;
}

Status GiveFile(const std::string& path, const RunAs& who, mode_t mode) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Internal(Errno("cannot open " + path));
  Status s = Own(fd, path, who, mode);
  close(fd);
  return s;
}

}  // namespace snn
