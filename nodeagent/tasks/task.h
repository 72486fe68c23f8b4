// One task as the agent keeps it: what was fixed when it started, its process, and one phase
// (running, stopping, ended) with the stop's intent beside it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "nodeagent/hal/board.h"
#include "nodeagent/tasks/launcher.h"
#include "proto/node.pb.h"

namespace snn {

class SpawnedProcess;

// How logs name a task: as its tenant knows it, then the global id the agent files it under:
// "job 3 of tenant lab-a (global 17) task 0".
inline std::string TaskLogName(const v1::LaunchRequest& request) {
  return "job " + std::to_string(request.tenant_job_id()) + " of tenant " + request.tenant() +
         " (global " + std::to_string(request.job_id()) + ") task " +
         std::to_string(request.index());
}

// Fixed once the task is started (or re-attached from the record an earlier agent left).
struct TaskLaunch {
  TaskKey key;
  uint32_t board = 0;
  v1::Resources resources;
  v1::LaunchRequest request;
  int64_t start_ms = 0;
  int64_t deadline_ms = 0;  // 0: none
  std::string stdout_path, stderr_path;
  std::string exit_file;    // where its shepherd writes how it ended
  std::string record_file;  // what a later agent re-attaches from
  std::string gateway_token;
  std::string cgroup;     // its name under the agent's task cgroups
  bool attached = false;  // started by an earlier agent: not our child
};

// Its shepherd (the leader of the task's process group) and how that process ended.
struct TaskProcess {
  pid_t pid = 0;
  // Held before its command while its network is built and its board reserved off the io
  // thread; released once both are done (or killed, if either fails).
  std::shared_ptr<SpawnedProcess> held;
  bool awaiting_network = false;
  bool awaiting_board = false;
  StartOrder start;  // what its board's reservation adds (environment, isolated network)
  bool exited = false;
  int exit_code = 0;
  int term_signal = 0;
};

// Why a task is stopped, or why it ended other than on its own: what it ends as, in words.
struct TaskStop {
  v1::TaskState as = v1::TASK_KILLED;
  std::string reason;
  int64_t kill_at_ms = 0;  // SIGKILL from then on, if the group is still there
};

enum class TaskPhase { kRunning, kStopping, kEnded };

struct Task {
  TaskLaunch launch;
  TaskProcess process;
  TaskPhase phase = TaskPhase::kRunning;
  std::optional<TaskStop> stop;                  // set when stopping begins; kept once ended
  v1::TaskMapping mapping;                       // where it runs (it moves off a core that dies)
  v1::TaskState final_state = v1::TASK_RUNNING;  // once ended
  int64_t end_ms = 0;                            // once ended
  v1::SpikeUsage usage;                          // the last counted (final once ended)
  v1::Checkpoint checkpoint;                     // the latest the master was told of
  int64_t checkpoint_seen_ms = 0;                // when the directory was last looked at
  // What the agent says of it beyond its state (its board powering on and booting, and how long
  // that took): its detail, sent with the next heartbeat when it changes.
  std::string note;
  bool note_sent = true;

  void SetNote(std::string text) {
    note = std::move(text);
    note_sent = false;
  }

  // Records why the task stops (or ended other than on its own); no signal goes out.
  void SetStop(TaskStop why) {
    stop = std::move(why);
    if (phase != TaskPhase::kEnded) phase = TaskPhase::kStopping;
  }
  bool stopping() const { return phase == TaskPhase::kStopping; }
  bool ended() const { return phase == TaskPhase::kEnded; }
  const TaskKey& key() const { return launch.key; }
};

}  // namespace snn
