// Test helper: start a program with its output in files and no inherited descriptors.
#pragma once

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

extern char** environ;

namespace snn::testing {

// Starts argv[0] (a path) with stdin from /dev/null; returns its pid or -1 (it could not be
// run). A test killed outright (a timeout's SIGKILL, a hung run someone kills) takes what it
// started with it: the kernel sends the child SIGKILL when the thread that started it ends.
// So start daemons from the test's main thread only, never from a thread that ends before them.
inline pid_t SpawnLogged(const std::vector<std::string>& argv, const std::string& out_path,
                         const std::string& err_path) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int report[2];  // the child's exec error, if any; closed by a successful exec
  if (pipe2(report, O_CLOEXEC) != 0) return -1;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(report[0]);
    close(report[1]);
    return -1;
  }
  if (pid == 0) {  // only async-signal-safe calls from here
    int error = 0;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    const int in = open("/dev/null", O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in < 0 || out < 0 || err < 0 || dup2(in, STDIN_FILENO) < 0 ||
        dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0) {
      error = errno;
    } else {
      // No socket or file of the test leaks into a daemon (the report pipe closes at exec).
      syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
      execve(argv[0].c_str(), args.data(), environ);
      error = errno;
    }
    (void)!write(report[1], &error, sizeof error);
    _exit(127);
  }
  close(report[1]);
  int error = 0;
  ssize_t got;
  do {
    got = read(report[0], &error, sizeof error);
  } while (got < 0 && errno == EINTR);
  close(report[0]);
  if (got > 0) {  // it never ran
    waitpid(pid, nullptr, 0);
    return -1;
  }
  return pid;
}

}  // namespace snn::testing
