// The agent's tasks: launches them on a board (mapping cores, channels, a queue), enforces
// their time limits, stops them on request (SIGTERM, then SIGKILL after a grace period), reaps
// them, and keeps each ended task's status until the master acknowledges it.
// A task has ended only when every process of its group is gone.
// Thread contract: agent io thread only. Time comes from the injected Clock.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/daemon/board_config.h"
#include "nodeagent/boards/board_lifecycle.h"
#include "nodeagent/boards/task_boards.h"
#include "nodeagent/drivers/driver_pool.h"
#include "nodeagent/hal/board.h"
#include "nodeagent/hal/network_builder.h"
#include "nodeagent/spikes/spike_gateway.h"
#include "nodeagent/tasks/task.h"
#include "nodeagent/tasks/task_cgroups.h"
#include "nodeagent/tasks/task_checkpoints.h"
#include "nodeagent/tasks/task_planes.h"
#include "nodeagent/tasks/task_records.h"
#include "nodeagent/tasks/task_sandbox.h"
#include "nodeagent/tasks/task_upkeep.h"
#include "proto/node.pb.h"

namespace snn {

struct TaskManagerOptions {
  std::string data_dir;  // task output and records go under data_dir/tasks/
  std::string shepherd;  // the snn-shepherd binary
  std::string node_name;
  int64_t kill_grace_ms = 5000;
  // What every task starts from (snn-agent: PATH from --task_path, never its own environment);
  // see nodeagent/tasks/task_env.h.
  std::map<std::string, std::string> base_env;
  std::map<std::string, BoardRuntime> runtimes;  // by board type: set up for its tasks
  uint32_t gateway_burst_ms = 20;  // each task's token bucket holds this much of its budget
  bool allow_root_tasks = false;   // run root's jobs as root (otherwise they fail to launch)
  // Tasks that run as their users see only that user's processes (snn-shepherd --hide-processes).
  bool hide_processes = true;
  // Tasks on driver (pass-through) boards get a network namespace in which only their boards'
  // endpoints answer (snn-shepherd relays them; see nodeagent/tasks/board_relay.h).
  bool isolate_boards = true;
  // Every task is kept from the device nodes of the node's driver boards (the boards file's
  // `devices:`) but its own board's, by its cgroup (nodeagent/tasks/device_filter.h); a task
  // that cannot be does not run. False: tasks may open any device node their user may.
  bool confine_devices = true;
  // Each task's cgroup (not owned; null: none). Limits for jobs that give none: MiB, processes.
  TaskCgroups* cgroups = nullptr;
  uint64_t default_memory_mb = 4096;
  // The most a job may ask for (task.memory_mb), MiB; 0: no cap. snn-agent: the node's memory.
  uint64_t max_memory_mb = 0;
  uint32_t default_max_processes = 4096;
  // The node's board drivers (not owned; null: every board is simulated in the agent).
  DriverPool* drivers = nullptr;
  // Each task's checkpoint directory lives under this root (empty: no checkpoints); see
  // nodeagent/tasks/task_checkpoints.h. Directories of tasks that did not end with exit 0 are kept
  // this long after they were last touched.
  std::string checkpoint_root;
  int64_t checkpoint_keep_ms = 7LL * 86400 * 1000;
  // Task directories (output, results) are removed this long after their task ended (0: kept;
  // nodeagent/tasks/task_dir_sweep.h).
  int64_t task_keep_ms = 30LL * 86400 * 1000;
};

// Each driver board's device nodes, by board index, as they are numbered now (a node absent:
// its board unplugged).
using DeviceNumbers = std::map<uint32_t, std::set<DeviceNumber>>;
DeviceNumbers DeviceNumbersOf(TaskBoards& boards);
// The task's cgroup refusing the device nodes of every driver board but its own (nothing
// unless options.confine_devices).
Status ConfineDevices(const TaskManagerOptions& options, const Task& task,
                      const DeviceNumbers& numbers);

class TaskManager {
 public:
  // `gateway` (not owned; may be null: tasks then get no SNN_GATEWAY) carries the tasks' spikes.
  // `records` keeps each task's record (null: files in the data dir).
  TaskManager(const Clock& clock, std::vector<std::unique_ptr<Board>> boards,
              TaskManagerOptions options, SpikeGateway* gateway = nullptr,
              std::unique_ptr<TaskRecords> records = nullptr);

  // Re-attaches to the tasks a previous agent left running (or that ended meanwhile), from the
  // records in the data dir. Call once, before the first launch.
  void Recover();

  // Starts a task; launching one that exists already answers with its status. A task that
  // cannot be started answers TASK_LAUNCH_FAILED; a board without room, kResourceExhausted.
  Result<v1::TaskStatus> Launch(const v1::LaunchRequest& request);

  // Stops a task (its whole process group); unknown or ended tasks are not an error.
  void Kill(const TaskKey& key, const std::string& reason);

  // Reaps exited processes, enforces time limits and kill escalation, ends tasks whose
  // process groups are gone. Call on SIGCHLD and on a timer.
  void Poll();

  // Running tasks and ended ones the master has not acknowledged.
  std::vector<v1::TaskStatus> Snapshot() const;
  std::vector<v1::TaskStatus> EndedUnacknowledged() const;
  // The spike usage of running tasks whose counters moved since the last call.
  std::vector<v1::TaskUsage> UsageChanges();
  void Acknowledge(const std::vector<TaskKey>& keys);

  // The lease the master granted: every task's shepherd stops it if the agent does not renew
  // the lease file for this long. RenewLease() is called whenever the master answers; it touches
  // the file's time in place (the shepherds only stat it), not a new file at every answer.
  // Boards run by a driver that have been idle for `suspend_after_ms` are powered off (0:
  // never); the master's policy (scheduler.suspend_after). Told at registration and each
  // heartbeat.
  void SetMasterTerms(int64_t lease_ms, uint64_t suspend_after_ms) {
    lease_ms_ = lease_ms;
    suspend_after_ms_ = suspend_after_ms;
  }
  void RenewLease();

  // Cut off from the master past the lease: kills every task's group at once and reports the
  // tasks lost (the master requeues them), so no task runs on beside its requeued copy.
  void LoseAll(const std::string& reason);

  // Kills every task's process group with SIGKILL; Poll then sees them go.
  void KillAll();

  // The node's boards (fault injection goes to a board directly; see ReconcileBoard).
  TaskBoards& boards() { return boards_; }
  const TaskBoards& boards() const { return boards_; }
  // Brings the tasks on board `index` in line with what the board reports now (after a fault,
  // injected or found): a core that died is never handed out again, and a task holding it moves
  // to other free live cores with the same logical core IDs (new mapping file) or, when the
  // board has no room, is stopped and reported lost so that its job is requeued; on a failed
  // board (health 0) every task is stopped and reported lost. What happened, in words.
  std::string ReconcileBoard(uint32_t index);

  size_t active_count() const;
  // Each running task as metrics see it: where it runs, what it holds, its spike counts now.
  struct TaskView {
    TaskKey key;
    std::string tenant;
    uint64_t tenant_job_id = 0;  // the job as its tenant knows it
    uint32_t board = 0;
    v1::Resources resources;
    v1::SpikeUsage usage;
  };
  std::vector<TaskView> RunningTasks() const;
  // What the task manager calls (each may be empty): `ended`, a task ended (report it);
  // `boards_changed`, a board's power or health changed (the master should hear of it); `wake`,
  // from another thread, a task's network is built (Poll soon: it starts the task).
  struct Calls {
    std::function<void()> ended, boards_changed, wake;
  };
  void set_calls(Calls calls) {
    on_ended_ = std::move(calls.ended);
    lifecycle_.set_on_changed(std::move(calls.boards_changed));
    planes_.set_wake(std::move(calls.wake));
  }

  // Task directories are under data_dir()/tasks/.
  const std::string& data_dir() const { return options_.data_dir; }

 private:
  void BeginStop(Task& task, v1::TaskState as, const std::string& reason);
  // Stops the task at once (SIGKILL) and reports it lost: the node's fault, not the job's.
  void Lose(Task& task, const std::string& reason);
  // Saves the stop's intent in the task's record before any signal goes out.
  void RecordStop(const Task& task);
  void Finish(Task& task);
  // Driver boards' device nodes (task_drivers.cc): refused again to every live task but the
  // board's own once their numbers change.
  void RefreshDeviceFilters();
  // Opens the planes of the networks built since the last call and releases their tasks; a
  // build that failed fails its task's launch (the command never ran).
  void AttachBuiltNetworks();
  // Lets a held task's command run once its network and its board are ready.
  void StartHeld(Task& task);
  // A held task that cannot start: its command never runs; it ends as a failed launch.
  void FailHeld(Task& task, const std::string& why, v1::TaskState as = v1::TASK_LAUNCH_FAILED);
  // Boards that drivers run (task_drivers.cc; their lifecycle: lifecycle_): the task's board is
  // reserved before its command runs, with the reservation's environment and endpoints.
  void ReserveBoard(Task& task, const RunAs& who);
  void OnReserved(Task& task, Result<v1::DriverReservation> answer, bool board_failed);
  v1::TaskStatus StatusOf(const Task& task) const;

  // Constant after construction.
  const Clock& clock_;
  const TaskManagerOptions options_;
  // Renewed while the master answers; every task's shepherd watches it.
  const std::string lease_file_ = options_.data_dir + "/lease";
  CheckpointStore checkpoints_{options_.checkpoint_root, options_.checkpoint_keep_ms};
  TaskUpkeep upkeep_{checkpoints_, options_.data_dir + "/tasks", options_.task_keep_ms};
  SpikeGateway* const gateway_;
  const std::unique_ptr<TaskRecords> records_;
  TaskBoards boards_;
  BoardLifecycle lifecycle_{
      clock_, boards_,
      [this](const std::string& driver, v1::DriverRequest request, BoardLifecycle::Answer then) {
        options_.drivers->Call(driver, std::move(request), std::move(then));
      }};

  std::map<TaskKey, Task> tasks_;
  std::map<pid_t, TaskKey> by_pid_;
  // Cgroups of launches that failed after their shepherd started: removed once empty.
  std::vector<std::string> orphan_cgroups_;
  int64_t lease_ms_ = 0;
  uint64_t suspend_after_ms_ = 0;
  // Each driver board's device numbers as last looked up (RefreshDeviceFilters).
  DeviceNumbers device_numbers_;
  std::function<void()> on_ended_;
  // Each task's spike plane (its network on its board); its builder stops first.
  TaskPlanes planes_{clock_, gateway_, boards_, options_.gateway_burst_ms};
};

}  // namespace snn
