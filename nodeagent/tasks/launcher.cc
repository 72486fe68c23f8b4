#include "nodeagent/tasks/launcher.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace snn {

SpawnedProcess::SpawnedProcess(SpawnedProcess&& other) noexcept
    : pid_(other.pid_), start_fd_(other.start_fd_) {
  other.start_fd_ = -1;
}

SpawnedProcess::~SpawnedProcess() {
  if (start_fd_ >= 0) close(start_fd_);
}

Status SpawnedProcess::Release(const StartOrder& order) {
  if (start_fd_ < 0) return Status::Ok();
  // What the shepherd adds to the command's environment ("E" NAME=VALUE NUL each), the
  // endpoints it relays ("R" ENDPOINT NUL each) into a network of the command's own ("I"), then go.
  std::string message;
  for (const auto& [name, value] : order.env) message += "E" + name + "=" + value + '\0';
  for (const std::string& endpoint : order.relay) message += "R" + endpoint + '\0';
  if (order.isolate_network) message += 'I';
  message += 'g';
  size_t sent = 0;
  int err = 0;
  while (sent < message.size()) {
    const ssize_t n = write(start_fd_, message.data() + sent, message.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = errno;
      break;
    }
    sent += static_cast<size_t>(n);
  }
  close(start_fd_);
  start_fd_ = -1;
  if (sent != message.size()) {
    return Internal(std::string("cannot release the task's shepherd: ") + strerror(err));
  }
  return Status::Ok();
}

namespace {

// The command's path: looked up in the task's PATH, as a shell started in that environment
// would (the shepherd, when there is one, looks it up as the task's user).
Result<std::string> ResolveCommand(const ProcessSpec& spec) {
  const bool shepherd = !spec.shepherd.empty();
  std::string path_env = spec.env.count("PATH") ? spec.env.at("PATH") : "/usr/bin:/bin";
  std::string resolved = spec.command;
  if (!shepherd && spec.command.find('/') == std::string::npos) {
    resolved.clear();
    size_t start = 0;
    while (start <= path_env.size()) {
      size_t end = path_env.find(':', start);
      if (end == std::string::npos) end = path_env.size();
      std::string dir = path_env.substr(start, end - start);
      std::string candidate = (dir.empty() ? "." : dir) + "/" + spec.command;
      if (access(candidate.c_str(), X_OK) == 0) {
        resolved = candidate;
        break;
      }
      start = end + 1;
    }
    if (resolved.empty()) {
      return InvalidArgument("command '" + spec.command + "' not found in PATH");
    }
  }

  if (!shepherd && access(resolved.c_str(), X_OK) != 0) {
    return InvalidArgument("command '" + spec.command + "' does not exist or is not executable");
  }
  return resolved;
}

// The shepherd leads the group and runs the command: argv = shepherd EXIT_FILE COMMAND ARGS.
std::vector<std::string> ArgvOf(const ProcessSpec& spec, const std::string& resolved, bool hold) {
  const bool shepherd = !spec.shepherd.empty();
  std::vector<std::string> argv_storage;
  if (!spec.shepherd.empty()) argv_storage = {spec.shepherd, spec.exit_file};
  if (!spec.shepherd.empty() && spec.lease_ms > 0) {
    argv_storage.insert(argv_storage.end(),
                        {"--lease", spec.lease_file, std::to_string(spec.lease_ms)});
  }
  if (hold) argv_storage.insert(argv_storage.end(), {"--start-fd", "3"});
  if (shepherd) {
    argv_storage.insert(argv_storage.end(), spec.user_args.begin(), spec.user_args.end());
    if (!spec.workdir.empty()) argv_storage.insert(argv_storage.end(), {"--chdir", spec.workdir});
    argv_storage.push_back("--");
  }
  argv_storage.push_back(resolved);
  argv_storage.insert(argv_storage.end(), spec.args.begin(), spec.args.end());
  return argv_storage;
}

}  // namespace

Result<SpawnedProcess> SpawnProcess(const ProcessSpec& spec) {
  const bool shepherd = !spec.shepherd.empty();
  struct stat st {};
  if (!shepherd && !spec.workdir.empty() &&
      (stat(spec.workdir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))) {
    return InvalidArgument("working directory '" + spec.workdir + "' does not exist");
  }
  auto resolved = ResolveCommand(spec);
  if (!resolved.ok()) return resolved.status();
  std::vector<std::string> env_storage;
  for (const auto& [k, v] : spec.env) env_storage.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, spec.stdout_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, spec.stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
  if (!shepherd && !spec.workdir.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, spec.workdir.c_str());
  }
  // A held start: the shepherd reads its go from fd 3. The agent keeps the write end (close on
  // exec, so no other task inherits it); when the agent dies, the shepherd reads end of file.
  int start_pipe[2] = {-1, -1};
  const bool hold = spec.hold_start && !spec.shepherd.empty();
  if (hold) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      posix_spawn_file_actions_destroy(&actions);
      return Internal(std::string("cannot make the start pipe: ") + strerror(errno));
    }
    // Above the descriptors dup2 targets, so that dup2 to 3 always clears close-on-exec.
    start_pipe[0] = fcntl(fds[0], F_DUPFD_CLOEXEC, 10);
    start_pipe[1] = fds[1];
    close(fds[0]);
    posix_spawn_file_actions_adddup2(&actions, start_pipe[0], 3);
  }
  // Nothing of the agent's leaks into the task: an inherited copy of the master session would
  // keep that connection open after the agent dies, hiding the agent's death from the master.
  posix_spawn_file_actions_addclosefrom_np(&actions, hold ? 4 : 3);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty, all;
  sigemptyset(&empty);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> argv_storage = ArgvOf(spec, *resolved, hold);
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc =
      posix_spawn(&pid, argv_storage[0].c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (start_pipe[0] >= 0) close(start_pipe[0]);
  if (rc != 0) {
    if (start_pipe[1] >= 0) close(start_pipe[1]);
    return InvalidArgument("cannot start '" + spec.command + "': " + std::strerror(rc));
  }
  return SpawnedProcess(pid, start_pipe[1]);
}

void SignalGroup(pid_t pgid, int sig) {
  if (pgid > 1) ::kill(-pgid, sig);
}

bool GroupExists(pid_t pgid) {
  if (pgid <= 1) return false;
  return ::kill(-pgid, 0) == 0 || errno == EPERM;
}

namespace {

// The fields of /proc/PID/stat after the command name: state, ppid, pgrp, ... starttime (22).
bool ReadStat(pid_t pid, char* state, pid_t* pgrp, uint64_t* start_time) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE* f = fopen(path, "r");
  if (f == nullptr) return false;
  char buf[1024];
  const size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char* p = strrchr(buf, ')');
  if (p == nullptr) return false;
  int ppid = 0, group = 0;
  unsigned long long start = 0;
  char st = 0;
  // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime
  // cstime priority nice threads itrealvalue starttime
  if (sscanf(p + 2, "%c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
             &st, &ppid, &group, &start) != 4) {
    return false;
  }
  if (state) *state = st;
  if (pgrp) *pgrp = group;
  if (start_time) *start_time = start;
  return true;
}

}  // namespace

bool ProcessAlive(pid_t pid, uint64_t* start_time) {
  char state = 0;
  return pid > 1 && ReadStat(pid, &state, nullptr, start_time) && state != 'Z' && state != 'X';
}

bool GroupAlive(pid_t pgid) {
  if (pgid <= 1) return false;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return GroupExists(pgid);
  bool alive = false;
  while (dirent* entry = readdir(dir)) {
    const pid_t pid = static_cast<pid_t>(atoi(entry->d_name));
    if (pid <= 0) continue;
    char state = 0;
    pid_t group = 0;
    if (ReadStat(pid, &state, &group, nullptr) && group == pgid && state != 'Z' && state != 'X') {
      alive = true;
      break;
    }
  }
  closedir(dir);
  return alive;
}

ShepherdReport ReadExitFile(const std::string& path) {
  ShepherdReport report;
  FILE* f = fopen(path.c_str(), "r");
  if (f == nullptr) return report;
  char how[16] = {};
  int value = 0;
  if (fscanf(f, "%15s %d", how, &value) == 2) {
    report.known = true;
    if (std::strcmp(how, "failed") == 0) {
      report.failed = true;
      report.exit_code = value;
      char detail[512] = {};
      if (fscanf(f, " %511[^\n]", detail) == 1) report.detail = detail;
    } else if (std::strcmp(how, "unstarted") == 0) {
      report.unstarted = true;
    } else if (std::strcmp(how, "lost") == 0) {
      report.lost = true;
      report.term_signal = SIGKILL;
    } else if (std::strcmp(how, "signaled") == 0) {
      report.term_signal = value;
    } else {
      report.exit_code = value;
    }
  }
  fclose(f);
  return report;
}

std::vector<ExitedChild> ReapChildren() {
  std::vector<ExitedChild> reaped;
  while (true) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;
    ExitedChild child;
    child.pid = pid;
    if (WIFEXITED(status)) child.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) child.term_signal = WTERMSIG(status);
    reaped.push_back(child);
  }
  return reaped;
}

void BecomeChildSubreaper() { prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

}  // namespace snn
