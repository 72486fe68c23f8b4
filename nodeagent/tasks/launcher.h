// Starts task processes and signals and reaps them. Each task runs in its own process group so
// that cancel, time limit and cleanup reach every process it started.
// Thread contract: call from the agent's io thread; the functions keep no state.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "common/base/status.h"

namespace snn {

struct ProcessSpec {
  std::string command;  // looked up in PATH unless it contains '/'
  std::vector<std::string> args;
  std::map<std::string, std::string> env;  // the complete environment
  std::string workdir;
  std::string stdout_path;
  std::string stderr_path;
  // The snn-shepherd binary that runs the command and records its end in `exit_file`.
  std::string shepherd;
  std::string exit_file;
  // The shepherd kills the task if `lease_file` goes `lease_ms` untouched (0: no lease).
  std::string lease_file;
  int64_t lease_ms = 0;
  // With a shepherd: it holds the command until SpawnedProcess::Release. If the handle goes
  // first (or the agent dies), the shepherd writes "unstarted" and exits without running it.
  bool hold_start = false;
  // With a shepherd: the user the command runs as ("--user UID GID GROUPS", see task_sandbox.h;
  // empty: the shepherd's own). The shepherd drops to it, enters `workdir` and looks the
  // command up in PATH as that user, so the agent never touches a path a user named.
  std::vector<std::string> user_args;
};

// A process SpawnProcess started. Move-only: it owns the write end of the start pipe.
// What a held shepherd is told before its go (shepherd_main.cc): the command's extra
// environment, and whether its network is its boards' endpoints only (relayed by the shepherd).
struct StartOrder {
  std::map<std::string, std::string> env;
  bool isolate_network = false;
  std::vector<std::string> relay;
};

class SpawnedProcess {
 public:
  SpawnedProcess(pid_t pid, int start_fd) : pid_(pid), start_fd_(start_fd) {}
  SpawnedProcess(SpawnedProcess&& other) noexcept;
  SpawnedProcess& operator=(SpawnedProcess&&) = delete;
  ~SpawnedProcess();  // a held command that was not released never runs

  pid_t pid() const { return pid_; }
  // Lets a held command run (nothing to do for one not held), with `env` added to its
  // environment. Call once, after whatever must be true before the command runs (its record on
  // disk, its board reserved) is true.
  Status Release(const StartOrder& order = {});

 private:
  pid_t pid_;
  int start_fd_;  // -1: not held, or released
};

// Starts the process as the leader of a new process group (pgid == pid), stdin from /dev/null,
// stdout and stderr to the given files (which must exist; never followed if links), no other
// inherited descriptors, default signal dispositions. Without a shepherd it fails with the
// reason (command not found, workdir missing) if it cannot be started; with one, the shepherd
// finds that out as the task's user and reports it in its exit file.
Result<SpawnedProcess> SpawnProcess(const ProcessSpec& spec);

// Sends `sig` to every process of the group; a group already gone is not an error.
void SignalGroup(pid_t pgid, int sig);

// Whether any process of the group still exists (zombies not yet reaped count).
bool GroupExists(pid_t pgid);

// Whether any process of the group is alive (zombies do not count). Scans /proc: for processes
// this agent did not start and so cannot reap.
bool GroupAlive(pid_t pgid);

// Whether `pid` runs and is not a zombie; its start time (from /proc) when it does.
bool ProcessAlive(pid_t pid, uint64_t* start_time = nullptr);

struct ShepherdReport {
  bool known = false;      // the shepherd wrote the file
  bool lost = false;       // it stopped the task itself: the agent's lease ran out
  bool unstarted = false;  // the agent never released it: the command did not run
  bool failed = false;     // the command could not be run (not found, workdir refused)
  std::string detail;      // why, when failed
  int exit_code = 0;
  int term_signal = 0;
};
ShepherdReport ReadExitFile(const std::string& path);

struct ExitedChild {
  pid_t pid = 0;
  int exit_code = 0;    // when it exited
  int term_signal = 0;  // when a signal ended it
};

// Reaps every child that has ended, without blocking.
std::vector<ExitedChild> ReapChildren();

// Makes this process adopt its descendants' orphans, so they can be reaped here.
void BecomeChildSubreaper();

}  // namespace snn
