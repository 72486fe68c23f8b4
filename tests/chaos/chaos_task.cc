// snn-chaos-task DIR SECONDS: the task the chaos run submits. While it runs it holds an
// exclusive lock on its task identity and on each of its cores (files under DIR/locks); a lock
// it cannot take means another live process holds the same task or core at this moment, and it
// writes that to DIR/violations. Locks go with the process, even on SIGKILL. It logs its start to
// DIR/starts, then sleeps.
#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/base/clock.h"

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

void Append(const std::string& path, const std::string& line) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  (void)!write(fd, line.data(), line.size());  // one write: lines never interleave
  close(fd);
}

// Takes an exclusive lock on `name` for the life of the process; false if someone holds it.
bool Hold(const std::string& dir, const std::string& name) {
  const int fd = open((dir + "/locks/" + name).c_str(), O_RDWR | O_CREAT, 0644);
  return fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: snn-chaos-task DIR SECONDS\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::string job = Env("SNN_GLOBAL_JOB_ID"), task = Env("SNN_TASK_ID"),
                    attempt = Env("SNN_ATTEMPT"), node = Env("SNN_NODE"), board = Env("SNN_BOARD");
  const std::string who = "job " + job + " task " + task + " attempt " + attempt + " on " + node;
  Append(dir + "/starts", job + " " + task + " " + attempt + " " + node + "\n");
  if (!Hold(dir, "task-" + job + "-" + task)) {
    Append(dir + "/violations", "two copies running: " + who + "\n");
  }
  std::string cores = Env("SNN_CORES");
  size_t start = 0;
  while (start < cores.size()) {
    size_t end = cores.find(';', start);
    if (end == std::string::npos) end = cores.size();
    const std::string core = cores.substr(start, end - start);
    if (!Hold(dir, "core-" + node + "-" + board + "-" + core)) {
      Append(dir + "/violations",
             "core " + core + " of " + node + "/" + board + " held twice: " + who + "\n");
    }
    start = end + 1;
  }
  const double seconds = atof(argv[2]);
  snn::SleepRealMs(static_cast<int64_t>(seconds * 1000));  // a job's work, in real time
  return 0;
}
