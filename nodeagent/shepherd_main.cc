// snn-shepherd EXIT_FILE [--lease FILE MS] COMMAND [ARGS...]: runs one task's command for the
// agent and records how it ended, so that an agent started later (after a restart) can still
// learn the exit status of a task it did not start. The shepherd leads the task's process group,
// ignores the termination signals sent to the group (the command gets them), waits for the
// command, writes "exited CODE" or "signaled SIG" to EXIT_FILE atomically, and exits the same way.
//
// With --start-fd, the shepherd first waits for one byte ('g') on FD: the agent sends it once the
// task's record is saved. End of file instead (the agent died) means no agent will ever know of
// the task: the shepherd writes "unstarted 0" and exits without running the command.
//
// With --lease, the agent touches FILE whenever it hears from the master. If FILE goes MS
// without a touch (the agent is dead or cut off), the shepherd writes "lost MS" and kills the
// whole group: the master requeues the job after its heartbeat timeout, which is longer, so the
// task never runs on beside its requeued copy even when no agent is left to stop it.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/clock.h"

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
    "usage: snn-shepherd EXIT_FILE [--lease FILE MS] [--start-fd FD] COMMAND [ARGS...]\n";

// Waits for the agent's go on `fd`: true once it came, false if the agent closed the pipe (or
// died) without giving it.
bool AwaitStart(int fd) {
  char go = 0;
  ssize_t n;
  do {
    n = read(fd, &go, 1);
  } while (n < 0 && errno == EINTR);
  close(fd);
  return n == 1 && go == 'g';
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fputs(kUsage, stderr);
    return 2;
  }
  const std::string exit_file = argv[1];
  std::string lease_file;
  int64_t lease_ms = 0;
  int start_fd = -1;
  int command = 2;
  while (command < argc && std::strncmp(argv[command], "--", 2) == 0) {
    const std::string option = argv[command];
    if (option == "--lease" && command + 2 < argc) {
      lease_file = argv[command + 1];
      lease_ms = atoll(argv[command + 2]);
      command += 3;
    } else if (option == "--start-fd" && command + 1 < argc) {
      start_fd = atoi(argv[command + 1]);
      command += 2;
    } else {
      break;
    }
  }
  if (command >= argc) {
    fputs(kUsage, stderr);
    return 2;
  }
  // Held: the agent records the task before it lets the command run. No go means the agent died
  // first: no agent will ever know of this task, so it must never run.
  if (start_fd >= 0 && !AwaitStart(start_fd)) {
    Record(exit_file, "unstarted 0\n");
    return 0;
  }
  const pid_t child = fork();
  if (child < 0) {
    Record(exit_file, "exited 127\n");
    return 127;
  }
  if (child == 0) {
    execv(argv[command], argv + command);
    fprintf(stderr, "snn-shepherd: cannot run %s: %s\n", argv[command], strerror(errno));
    _exit(127);
  }
  // Only the command should die of a group-wide SIGTERM; the shepherd reports it.
  signal(SIGTERM, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  int status = 0;
  const int64_t started = NowMs();
  while (true) {
    const pid_t done = waitpid(child, &status, lease_ms > 0 ? WNOHANG : 0);
    if (done == child) break;
    if (done < 0 && errno != EINTR) break;
    if (lease_ms > 0) {
      if (NowMs() - TouchedMs(lease_file, started) > lease_ms) {
        Record(exit_file, "lost " + std::to_string(lease_ms) + "\n");
        killpg(getpgrp(), SIGKILL);  // the command, its children, and this shepherd
      }
      snn::SleepRealMs(100);
    }
  }
  if (WIFSIGNALED(status)) {
    Record(exit_file, "signaled " + std::to_string(WTERMSIG(status)) + "\n");
    signal(WTERMSIG(status), SIG_DFL);
    kill(getpid(), WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  Record(exit_file, "exited " + std::to_string(WEXITSTATUS(status)) + "\n");
  return WEXITSTATUS(status);
}
