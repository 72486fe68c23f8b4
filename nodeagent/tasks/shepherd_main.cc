// snn-shepherd EXIT_FILE [OPTIONS] [--] COMMAND [ARGS...]: runs one task's command for the
// agent and records how it ended, so that an agent started later (after a restart) can still
// learn the exit status of a task it did not start. The shepherd leads the task's process group,
// ignores the termination signals sent to the group (the command gets them), waits for the
// command, writes "exited CODE" or "signaled SIG" to EXIT_FILE atomically, and exits the same way.
//
// With --start-fd, the shepherd first waits for one byte ('g') on FD: the agent sends it once the
// task's record is saved (after "E" NAME=VALUE NUL entries, which join the command's
// environment). End of file instead (the agent died) means no agent will ever know of
// the task: the shepherd writes "unstarted 0" and exits without running the command.
// An "I" before the go gives the command a network namespace of its own in which only the
// boards' endpoints sent as "R" ADDRESS:PORT NUL entries answer, relayed by the shepherd
// (board_relay.h). If that cannot be done the command does not run.
//
// With --lease, the agent touches FILE whenever it hears from the master. If FILE goes MS
// without a touch (the agent is dead or cut off), the shepherd writes "lost MS" and kills the
// whole group: the master requeues the job after its heartbeat timeout, which is longer, so the
// task never runs on beside its requeued copy even when no agent is left to stop it.
//
// With --user UID GID GROUPS (GROUPS: comma-separated gids, or "-"), the command runs as that
// user, for good; the shepherd stays root so that the task cannot signal it or forge its report.
// With --hide-processes (and --user), the command gets a private /proc that shows its user's
// processes only (procfs hidepid=invisible, in a mount namespace of its own): another user's
// command line and environment stay out of its sight. If that cannot be done the command does
// not run (nothing is weakened silently).
// With --chdir DIR, the command starts in DIR. The command is looked up in PATH, and DIR entered,
// with the user's rights. If it cannot run, the shepherd writes "failed 127 WHY".
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "nodeagent/tasks/board_relay.h"

namespace {

void Record(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  if (FILE* f = fopen(tmp.c_str(), "w")) {
    fputs(text.c_str(), f);
    fflush(f);
    fsync(fileno(f));
    fclose(f);
    rename(tmp.c_str(), path.c_str());
  }
}

// Wall time, as the lease file's mtime is: the shepherd waits in real time, on its own.
int64_t NowMs() { return snn::SystemClock().NowMs(); }

// When FILE was last touched (ms since the epoch), or `fallback` if it cannot be read.
int64_t TouchedMs(const std::string& file, int64_t fallback) {
  struct stat st {};
  if (stat(file.c_str(), &st) != 0) return fallback;
  return int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1000000;
}

constexpr char kUsage[] =
    "usage: snn-shepherd EXIT_FILE [--lease FILE MS] [--start-fd FD] [--user UID GID GROUPS]\n"
    "                    [--hide-processes] [--chdir DIR] [--] COMMAND [ARGS...]\n";

struct User {
  bool set = false;
  bool hide_processes = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

bool ParseUser(const char* uid, const char* gid, const char* groups, User* user) {
  char* end = nullptr;
  user->uid = static_cast<uid_t>(strtoul(uid, &end, 10));
  if (*uid == '\0' || *end != '\0') return false;
  user->gid = static_cast<gid_t>(strtoul(gid, &end, 10));
  if (*gid == '\0' || *end != '\0') return false;
  if (std::strcmp(groups, "-") != 0) {
    for (const char* p = groups; *p != '\0';) {
      user->groups.push_back(static_cast<gid_t>(strtoul(p, &end, 10)));
      if (end == p || (*end != ',' && *end != '\0')) return false;
      p = *end == ',' ? end + 1 : end;
    }
  }
  user->set = true;
  return true;
}

std::string ReadAll(int fd) {
  std::string text;
  char buf[512];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text.substr(0, 400);
}

// In the forked child: becomes the task's user for good, enters its working directory and runs
// the command, looked up in the task's PATH with that user's rights. Returns why not if it
// cannot (the exec replaced it otherwise).
std::string BecomeTask(const User& user, const std::string& workdir, const char* command,
                       char** args) {
  if (user.hide_processes) {
    if (unshare(CLONE_NEWNS) != 0) {
      return std::string("cannot hide other users' processes: no mount namespace: ") +
             strerror(errno);
    }
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") !=
            0) {
      return std::string(
                 "cannot hide other users' processes: cannot mount a private /proc "
                 "with hidepid=invisible (Linux 5.8 or later): ") +
             strerror(errno) + " (snn-agent --task_hide_processes=false runs tasks without it)";
    }
  }
  if (user.set) {
    if (setgroups(user.groups.size(), user.groups.data()) != 0 || setgid(user.gid) != 0 ||
        setuid(user.uid) != 0) {
      return "cannot become uid " + std::to_string(user.uid) + ": " + strerror(errno);
    }
    if (user.uid != 0 && setuid(0) == 0) return "could regain root after dropping it";
  }
  if (!workdir.empty() && chdir(workdir.c_str()) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return "working directory '" + workdir + "' does not exist";
    }
    return "cannot enter working directory '" + workdir + "': " + strerror(errno);
  }
  if (std::strchr(command, '/') != nullptr) {
    execvp(command, args);
    if (errno == ENOENT) return "command '" + std::string(command) + "' does not exist";
    return "cannot run '" + std::string(command) + "': " + strerror(errno);
  }
  // Searched here rather than by execvp, which reports a command found nowhere as "Permission
  // denied" when some directory of PATH cannot be searched.
  const char* path = getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::string not_executable;
  for (size_t from = 0; from <= dirs.size();) {
    size_t to = dirs.find(':', from);
    if (to == std::string::npos) to = dirs.size();
    const std::string dir = to > from ? dirs.substr(from, to - from) : ".";
    const std::string candidate = dir + "/" + command;
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (access(candidate.c_str(), X_OK) == 0) {
        execvp(candidate.c_str(), args);
        return "cannot run '" + candidate + "': " + strerror(errno);
      }
      if (not_executable.empty()) not_executable = candidate;
    }
    from = to + 1;
  }
  if (!not_executable.empty()) {
    return "command '" + std::string(command) + "' is " + not_executable +
           ", which this user may not execute";
  }
  return "command '" + std::string(command) + "' not found in PATH (" + dirs.substr(0, 300) + ")";
}

// What the agent sends before its go: the command's extra environment (a board's endpoints,
// known only once it is reserved) and whether the command's network is only its boards.
struct StartOrder {
  bool isolate = false;
  std::vector<std::string> relay;  // endpoints the isolated command may reach
};

// Waits for the agent's go on `fd` ("E" NAME=VALUE NUL, "R" ENDPOINT NUL and "I" entries
// before it, at most 64 KiB): true once it came, false if the agent closed the pipe (or died)
// without giving it, or sent what it never sends.
bool AwaitStart(int fd, StartOrder* order) {
  std::string entry;
  size_t total = 0;
  char kind = 0;  // of the entry being read: 'E' or 'R'
  for (;;) {
    char c = 0;
    ssize_t n;
    do {
      n = read(fd, &c, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1 || ++total > (64u << 10)) break;
    if (kind != 0) {
      if (c != '\0') {
        entry += c;
        continue;
      }
      if (kind == 'R') {
        order->relay.push_back(entry);
      } else {
        const size_t eq = entry.find('=');
        if (eq == 0 || eq == std::string::npos) break;  // not NAME=VALUE: not from the agent
        setenv(entry.substr(0, eq).c_str(), entry.c_str() + eq + 1, 1);
      }
      entry.clear();
      kind = 0;
    } else if (c == 'E' || c == 'R') {
      kind = c;
    } else if (c == 'I') {
      order->isolate = true;
    } else {
      close(fd);
      return c == 'g';
    }
  }
  close(fd);
  return false;
}

// What the agent said before the command.
struct Options {
  std::string exit_file;
  std::string lease_file;
  int64_t lease_ms = 0;
  int start_fd = -1;
  User user;
  std::string workdir;
};

// Reads the options before the command into `o`; the command's index in argv, or -1 if the
// options are wrong.
int ParseOptions(int argc, char** argv, Options* o) {
  o->exit_file = argv[1];
  int command = 2;
  while (command < argc && std::strncmp(argv[command], "--", 2) == 0) {
    const std::string option = argv[command];
    if (option == "--lease" && command + 2 < argc) {
      o->lease_file = argv[command + 1];
      o->lease_ms = atoll(argv[command + 2]);
      command += 3;
    } else if (option == "--start-fd" && command + 1 < argc) {
      o->start_fd = atoi(argv[command + 1]);
      command += 2;
    } else if (option == "--user" && command + 3 < argc) {
      if (!ParseUser(argv[command + 1], argv[command + 2], argv[command + 3], &o->user)) {
        return -1;
      }
      command += 4;
    } else if (option == "--hide-processes") {
      o->user.hide_processes = true;
      ++command;
    } else if (option == "--chdir" && command + 1 < argc) {
      o->workdir = argv[command + 1];
      command += 2;
    } else if (option == "--") {
      ++command;
      break;
    } else {
      break;
    }
  }
  return command;
}

// Waits for the command (its pidfd), relaying for it meanwhile, and checks the lease: the
// command's wait status.
int WaitForCommand(pid_t child, snn::BoardRelay* relay, const Options& o) {
  int status = 0;
  const int64_t started = NowMs();
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
  std::vector<pollfd> fds;
  while (true) {
    fds.clear();
    if (pidfd >= 0) fds.push_back(pollfd{pidfd, POLLIN, 0});
    if (relay != nullptr) relay->Watch(&fds);
    const bool timed = o.lease_ms > 0 || pidfd < 0;
    if (!fds.empty() || timed) poll(fds.data(), fds.size(), timed ? 100 : -1);
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 && errno != EINTR) break;
    if (relay != nullptr) relay->Relay(fds);
    if (o.lease_ms > 0 && NowMs() - TouchedMs(o.lease_file, started) > o.lease_ms) {
      Record(o.exit_file, "lost " + std::to_string(o.lease_ms) + "\n");
      killpg(getpgrp(), SIGKILL);  // the command, its children, and this shepherd
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fputs(kUsage, stderr);
    return 2;
  }
  Options o;
  const int command = ParseOptions(argc, argv, &o);
  if (command < 0) {
    fputs(kUsage, stderr);
    return 2;
  }
  const std::string& exit_file = o.exit_file;
  if (command >= argc) {
    fputs(kUsage, stderr);
    return 2;
  }
  // Held: the agent records the task before it lets the command run. No go means the agent died
  // first: no agent will ever know of this task, so it must never run.
  StartOrder order;
  if (o.start_fd >= 0 && !AwaitStart(o.start_fd, &order)) {
    Record(exit_file, "unstarted 0\n");
    return 0;
  }
  // The command forks inside the task's network namespace; the shepherd relays from outside.
  std::unique_ptr<snn::BoardRelay> relay;
  if (order.isolate) {
    auto isolated = snn::BoardRelay::Isolate(order.relay);
    if (!isolated.ok()) {
      Record(exit_file,
             "failed 127 cannot isolate the task's network: " + isolated.status().message() +
                 " (snn-agent --task_isolate_boards=false runs tasks without it)\n");
      return 127;
    }
    relay = std::move(isolated).value();
  }
  // The child reports why it could not run the command on a close-on-exec pipe: nothing arrives
  // once the exec succeeded.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    Record(exit_file, "failed 127 cannot make a pipe for the command\n");
    return 127;
  }
  const pid_t child = fork();
  if (child < 0) {
    Record(exit_file, "failed 127 cannot fork the command\n");
    return 127;
  }
  if (child == 0) {
    close(report[0]);
    const std::string why = BecomeTask(o.user, o.workdir, argv[command], argv + command);
    (void)!write(report[1], why.data(), why.size());
    _exit(127);
  }
  close(report[1]);
  if (relay != nullptr) {
    if (snn::Status s = relay->ReturnToHost(); !s.ok()) {
      killpg(getpgrp(), SIGKILL);  // the command must not run with nothing relaying for it
      Record(exit_file, "failed 127 cannot isolate the task's network: " + s.message() + "\n");
      return 127;
    }
  }
  const std::string failure = ReadAll(report[0]);
  close(report[0]);
  if (!failure.empty()) {
    waitpid(child, nullptr, 0);
    Record(exit_file, "failed 127 " + failure + "\n");
    return 127;
  }
  // Only the command should die of a group-wide SIGTERM; the shepherd reports it.
  signal(SIGTERM, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  const int status = WaitForCommand(child, relay.get(), o);
  if (WIFSIGNALED(status)) {
    Record(exit_file, "signaled " + std::to_string(WTERMSIG(status)) + "\n");
    signal(WTERMSIG(status), SIG_DFL);
    kill(getpid(), WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  Record(exit_file, "exited " + std::to_string(WEXITSTATUS(status)) + "\n");
  return WEXITSTATUS(status);
}
