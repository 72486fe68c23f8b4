// snn-shepherd EXIT_FILE COMMAND [ARGS...]: runs one task's command for the agent and records
// how it ended, so that an agent started later (after a restart) can still learn the exit
// status of a task it did not start. The shepherd leads the task's process group, ignores the
// termination signals sent to the group (the command gets them), waits for the command, writes
// "exited CODE" or "signaled SIG" to EXIT_FILE atomically, and exits the same way.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: snn-shepherd EXIT_FILE COMMAND [ARGS...]\n");
    return 2;
  }
  const std::string exit_file = argv[1];
  const pid_t child = fork();
  if (child < 0) {
    Record(exit_file, "exited 127\n");
    return 127;
  }
  if (child == 0) {
    execv(argv[2], argv + 2);
    fprintf(stderr, "snn-shepherd: cannot run %s: %s\n", argv[2], strerror(errno));
    _exit(127);
  }
  // Only the command should die of a group-wide SIGTERM; the shepherd reports it.
  signal(SIGTERM, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
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
