#include "nodeagent/tasks/task_manager.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <google/protobuf/util/json_util.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "nodeagent/tasks/launcher.h"
#include "nodeagent/tasks/mapping_file.h"
#include "nodeagent/tasks/task_env.h"
#include "nodeagent/tasks/task_output.h"

namespace snn {
namespace {

// 128 random bits, in hex: what a task shows the gateway to prove which task it is.
std::string NewGatewayToken() {
  std::random_device urandom;
  std::string token;
  for (int i = 0; i < 4; ++i) {
    char part[9];
    snprintf(part, sizeof part, "%08x", urandom());
    token += part;
  }
  return token;
}

// How a task that ended out of sight ended, from its shepherd's file.
void TakeShepherdReport(Task& task) {
  const ShepherdReport report = ReadExitFile(task.launch.exit_file);
  task.process.exit_code = report.exit_code;
  task.process.term_signal = report.known ? report.term_signal : SIGKILL;
  if (report.lost) {
    task.SetStop(TaskStop{v1::TASK_LOST,
                          "its shepherd stopped it: the agent's lease on the master ran out"});
  } else if (report.failed) {
    task.SetStop(TaskStop{v1::TASK_LAUNCH_FAILED, report.detail});
    task.process.term_signal = 0;
  } else if (report.unstarted && !task.stop) {  // a stop given while it waited says more
    task.SetStop(TaskStop{v1::TASK_LOST, "the agent stopped before the task could start"});
    task.process.term_signal = 0;
  }
}

// What a task's record keeps of it (a later agent re-attaches from it).
v1::AgentTaskRecord RecordOf(const Task& task, const v1::LaunchRequest& req) {
  v1::AgentTaskRecord record;
  *record.mutable_request() = req;
  *record.mutable_mapping() = task.mapping;
  record.set_pid(static_cast<uint32_t>(task.process.pid));
  uint64_t start_time = 0;
  ProcessAlive(task.process.pid, &start_time);
  record.set_proc_start_time(start_time);
  record.set_start_ms(task.launch.start_ms);
  record.set_deadline_ms(task.launch.deadline_ms);
  record.set_exit_file(task.launch.exit_file);
  record.set_stdout_path(task.launch.stdout_path);
  record.set_stderr_path(task.launch.stderr_path);
  record.set_gateway_token(task.launch.gateway_token);
  if (task.stop) {
    record.set_stop_as(task.stop->as);
    record.set_stop_reason(task.stop->reason);
  }
  return record;
}

// Gives the task its directory and private files, as `who`'s.
Status PrepareFiles(const Task& task, const std::string& dir, const RunAs& who,
                    const v1::BoardInfo& board, bool gateway) {
  SNN_RETURN_IF_ERROR(PrepareTaskDir(dir, who));
  const v1::LaunchRequest& req = task.launch.request;
  SNN_RETURN_IF_ERROR(WriteMappingFile(task.mapping, board));
  SNN_RETURN_IF_ERROR(GiveFile(task.mapping.mapping_file(), who, 0400));
  if (gateway) {
    SNN_RETURN_IF_ERROR(
        WritePrivateFile(dir + "/gateway_token", task.launch.gateway_token, who, 0400));
  }
  if (req.task().has_network()) {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    options.preserve_proto_field_names = true;  // as model files are written
    (void)google::protobuf::util::MessageToJsonString(req.task().network(), &json, options);
    SNN_RETURN_IF_ERROR(WritePrivateFile(dir + "/model.json", json, who, 0400));
  }
  // The job's own files (task.files), in the working directory the task starts in.
  for (const auto& [name, content] : req.task().files()) {
    SNN_RETURN_IF_ERROR(WritePrivateFile(dir + "/work/" + name, content, who, 0700));
  }
  SNN_RETURN_IF_ERROR(PrepareOutputDir(dir + "/output", who));
  // Created here as the user's, so that the task can read its own output and no one else can.
  SNN_RETURN_IF_ERROR(WritePrivateFile(dir + "/stdout", "", who));
  return WritePrivateFile(dir + "/stderr", "", who);
}

// The task's cgroup with the job's limits (or the node's defaults), holding `pid`, kept from
// other boards' device nodes.
Status ConfineTask(const TaskManagerOptions& options, const Task& task, pid_t pid,
                   TaskBoards& boards) {
  if (options.cgroups == nullptr) {
    return ConfineDevices(options, task,
                          options.confine_devices ? DeviceNumbersOf(boards) : DeviceNumbers());
  }
  const v1::TaskSpec& spec = task.launch.request.task();
  CgroupLimits limits;
  limits.memory_bytes = (spec.memory_mb() ? spec.memory_mb() : options.default_memory_mb) << 20;
  limits.max_pids = spec.max_processes() ? spec.max_processes() : options.default_max_processes;
  SNN_RETURN_IF_ERROR(options.cgroups->Create(task.launch.cgroup, limits));
  SNN_RETURN_IF_ERROR(options.cgroups->AddProcess(task.launch.cgroup, pid));
  return ConfineDevices(options, task,
                        options.confine_devices ? DeviceNumbersOf(boards) : DeviceNumbers());
}

// Moves a task off a dead core; false if the board has no room for it.
bool Remap(Task& task, TaskBoards& boards, TaskRecords& records) {
  const uint32_t board = task.launch.board;
  auto mapping =
      boards.Move(board, task.launch.key, task.launch.resources, task.mapping.mapping_file());
  if (!mapping.ok()) return false;
  task.mapping = *mapping;
  // Logical core i is still logical core i; the task finds where it now lives in its file.
  if (Status s = WriteMappingFile(task.mapping, boards.board(board)->Describe()); !s.ok()) {
    LOG(ERROR) << s.message();
  }
  if (Status s = records.Save(task.launch.record_file, RecordOf(task, task.launch.request));
      !s.ok())
    LOG(ERROR) << s.message();
  LOG(INFO) << TaskLogName(task.launch.request) << " moved off a dead core";
  return true;
}

// What runs for the task (its shepherd, command, environment, files), but for the lease.
ProcessSpec CommandOf(const TaskManagerOptions& options, const v1::LaunchRequest& req,
                      const Result<RunAs>& who, const v1::BoardInfo& board_info,
                      const std::string& dir, const v1::TaskMapping& mapping,
                      const SpikeGateway* gateway, const CheckpointStore& checkpoints) {
  ProcessSpec spec;
  spec.command = req.task().command();
  spec.args.assign(req.task().args().begin(), req.task().args().end());
  TaskEnvContext env;
  env.base_env = &options.base_env;
  const auto runtime = options.runtimes.find(board_info.type());
  env.runtime = runtime == options.runtimes.end() ? nullptr : &runtime->second;
  env.node_name = options.node_name;
  if (who.ok()) {
    env.user = who->user;
    env.home = who->home;
    env.shell = who->shell;
  }
  env.board_type = board_info.type();
  if (gateway != nullptr) {
    env.gateway_socket = gateway->socket_path();
    env.gateway_token_file = dir + "/gateway_token";
  }
  if (req.task().has_network()) env.model_file = dir + "/model.json";
  env.output_dir = dir + "/output";
  if (checkpoints.Kept(req)) env.checkpoint_dir = checkpoints.DirFor(CheckpointIdOf(req));
  spec.env = TaskEnvironment(env, req, mapping);
  spec.workdir = req.task().workdir().empty() ? dir + "/work" : req.task().workdir();
  if (who.ok() && who->switch_user) {
    spec.user_args = ShepherdUserArgs(*who);
    if (options.hide_processes) spec.user_args.push_back("--hide-processes");
  }
  spec.stdout_path = dir + "/stdout";
  spec.stderr_path = dir + "/stderr";
  spec.shepherd = options.shepherd;
  spec.exit_file = dir + "/exit_status";
  return spec;
}

// A task's memory within what the node allows one.
Status CheckMemory(const TaskManagerOptions& options, const v1::TaskSpec& task) {
  if (options.max_memory_mb == 0 || task.memory_mb() <= options.max_memory_mb) return Status::Ok();
  return InvalidArgument("task.memory_mb is " + std::to_string(task.memory_mb()) + " MiB; node " +
                         options.node_name + " allows a task at most " +
                         std::to_string(options.max_memory_mb) +
                         " MiB (snn-agent --task_memory_max_mb)");
}

// A task's record as it launches, in `dir`, named `name` (its cgroup's name too).
Task NewTask(const v1::LaunchRequest& req, const TaskKey& key, const std::string& name,
             const std::string& dir, const v1::TaskMapping& mapping, int64_t now_ms) {
  Task task;
  task.launch.cgroup = name;
  task.launch.key = key;
  task.launch.board = req.board();
  task.launch.resources = req.task().resources();
  task.mapping = mapping;
  task.launch.start_ms = now_ms;
  task.launch.record_file = dir + "/task.pb";
  task.launch.request = req;
  task.launch.gateway_token = NewGatewayToken();
  return task;
}

}  // namespace

TaskManager::TaskManager(const Clock& clock, std::vector<std::unique_ptr<Board>> boards,
                         TaskManagerOptions options, SpikeGateway* gateway,
                         std::unique_ptr<TaskRecords> records)
    : clock_(clock),
      options_(std::move(options)),
      gateway_(gateway),
      records_(records ? std::move(records) : std::make_unique<FileTaskRecords>()),
      boards_(std::move(boards)) {}

Result<v1::TaskStatus> TaskManager::Launch(const v1::LaunchRequest& req) {
  const TaskKey key{req.job_id(), req.index(), req.attempt()};
  if (auto it = tasks_.find(key); it != tasks_.end()) return StatusOf(it->second);
  if (req.board() >= boards_.size()) {
    return InvalidArgument("node " + options_.node_name + " has no board " +
                           std::to_string(req.board()));
  }
  auto mapping = boards_.Place(req.board(), key, req.task().resources(),
                               req.has_hint() ? &req.hint() : nullptr, req.hint_only());
  if (!mapping.ok()) return mapping.status();

  const std::string name =
      TaskDirName(req.tenant(), req.tenant_job_id(), req.index(), req.attempt());
  const std::string dir = options_.data_dir + "/tasks/" + name;
  mapping->set_mapping_file(dir + "/mapping.json");
  const v1::BoardInfo board_info = boards_.board(req.board())->Describe();
  RunAsPolicy policy;
  policy.allow_root = options_.allow_root_tasks;
  policy.node_name = options_.node_name;
  auto who = ResolveRunAs(req, policy);
  Task task = NewTask(req, key, name, dir, *mapping, clock_.NowMs());
  Status written =
      who.ok() ? PrepareFiles(task, dir, *who, board_info, gateway_ != nullptr) : who.status();
  if (written.ok()) written = CheckMemory(options_, req.task());
  if (written.ok() && checkpoints_.Kept(req)) {
    written = checkpoints_.Prepare(CheckpointIdOf(req), *who);
  }

  ProcessSpec spec =
      CommandOf(options_, req, who, board_info, dir, *mapping, gateway_, checkpoints_);
  spec.lease_file = lease_file_;
  spec.lease_ms = lease_ms_;
  spec.hold_start = true;  // runs once its record is saved: see Release below
  // Every task's network is what its board grants (board_relay.h; docs/drivers.md): a driver's
  // endpoints, or for a simulated board nothing. (A non-root agent runs tasks as itself.)
  task.process.start.isolate_network = options_.isolate_boards && geteuid() == 0;
  task.launch.stdout_path = spec.stdout_path;
  task.launch.stderr_path = spec.stderr_path;
  task.launch.exit_file = spec.exit_file;
  std::error_code stale;
  std::filesystem::remove(spec.exit_file, stale);
  bool building = false;  // then the command waits for its network
  Status plane = written.ok() ? planes_.Open(task, &building) : written;
  // A board a driver runs: the command waits for its reservation (endpoints, devices).
  const bool reserving = boards_.board(req.board())->driver() != nullptr;
  if (plane.ok() && reserving && options_.drivers == nullptr) {
    plane = FailedPrecondition("board " + std::to_string(req.board()) + " needs its driver");
  }
  auto spawned = plane.ok() ? SpawnProcess(spec) : Result<SpawnedProcess>(plane);
  Status started = spawned.ok() ? Status::Ok() : spawned.status();
  v1::TaskState failed_as = v1::TASK_LAUNCH_FAILED;
  if (spawned.ok()) {
    task.process.pid = spawned->pid();
    if (req.time_limit_ms() > 0)
      task.launch.deadline_ms = task.launch.start_ms + req.time_limit_ms();
    // Confined while held: whatever the command starts is in the task's cgroup.
    started = ConfineTask(options_, task, task.process.pid, boards_);
    // The record first, then the command: an agent that dies in between leaves a record the
    // next agent re-attaches to (its shepherd reports the task unstarted), never a task that
    // runs unknown to every agent beside the copy the master starts again.
    if (started.ok()) started = records_->Save(task.launch.record_file, RecordOf(task, req));
    if (started.ok() && (building || reserving)) {
      task.process.held = std::make_shared<SpawnedProcess>(std::move(*spawned));
      task.process.awaiting_network = building;
      task.process.awaiting_board = reserving;
    } else if (started.ok()) {
      started = spawned->Release(task.process.start);
    }
    if (!started.ok()) {
      failed_as = v1::TASK_LOST;               // the node's fault, not the job's: run it elsewhere
      SignalGroup(task.process.pid, SIGKILL);  // held: the command never ran
      records_->Remove(task.launch.record_file);
    }
  }
  if (!started.ok()) {
    if (options_.cgroups != nullptr && task.process.pid > 0) {
      options_.cgroups->KillAll(task.launch.cgroup);
      orphan_cgroups_.push_back(task.launch.cgroup);  // Poll removes it once its processes are gone
    }
    if (gateway_ != nullptr) gateway_->RemoveTask(key);
    boards_.Release(req.board(), key);
    v1::TaskStatus failed = StatusOf(task);
    failed.set_state(failed_as);
    failed.set_detail(started.message());
    failed.set_end_ms(task.launch.start_ms);
    LOG(WARNING) << TaskLogName(req) << " failed to start: " << started.message();
    return failed;  // a shepherd killed unreleased is reaped by Poll as no task's
  }
  by_pid_[task.process.pid] = key;
  LOG(INFO) << "started " << TaskLogName(req) << " attempt " << req.attempt() << " as pid "
            << task.process.pid << " on board " << req.board();
  auto& stored = tasks_[key] = std::move(task);
  if (reserving) ReserveBoard(stored, *who);
  return StatusOf(stored);
}

void TaskManager::Recover() {
  int adopted = 0;
  for (const auto& [record_file, record] : records_->LoadAll(options_.data_dir + "/tasks")) {
    ++adopted;
    const v1::LaunchRequest& req = record.request();
    const TaskKey key{req.job_id(), req.index(), req.attempt()};
    Task task;
    task.launch.key = key;
    task.launch.board = req.board();
    task.launch.resources = req.task().resources();
    task.mapping = record.mapping();
    task.process.pid = static_cast<pid_t>(record.pid());
    task.launch.start_ms = record.start_ms();
    task.launch.deadline_ms = record.deadline_ms();
    task.launch.stdout_path = record.stdout_path();
    task.launch.stderr_path = record.stderr_path();
    task.launch.exit_file = record.exit_file();
    task.launch.record_file = record_file;
    task.launch.request = req;
    task.launch.gateway_token = record.gateway_token();
    task.launch.cgroup = std::filesystem::path(record_file).parent_path().filename().string();
    task.launch.attached = true;
    if (record.stop_as() != v1::TASK_STATE_UNSPECIFIED) {  // an earlier agent was stopping it
      // Its grace is over: SIGKILL at the next poll.
      task.SetStop(TaskStop{record.stop_as(), record.stop_reason(), clock_.NowMs()});
    }
    uint64_t start_time = 0;
    const bool alive =
        ProcessAlive(task.process.pid, &start_time) && start_time == record.proc_start_time();
    if (Status s = boards_.Claim(req.board(), key, task.launch.resources, task.mapping); !s.ok()) {
      LOG(ERROR) << TaskLogName(req) << ": " << s.message();
    }
    bool building = false;  // a running task: its plane opens once its network is built
    if (!alive) {           // it ended while no agent watched: the shepherd's file says how
      task.process.exited = true;
      TakeShepherdReport(task);
    } else if (Status s = planes_.Open(task, &building); !s.ok()) {
      // The task keeps running; only its spike plane is gone.
      LOG(ERROR) << TaskLogName(req) << ": " << s.message();
    }
    LOG(INFO) << TaskLogName(req) << " (pid " << task.process.pid << ") "
              << (alive ? "still runs: re-attached" : "ended while the agent was away");
    tasks_[key] = std::move(task);
  }
  if (adopted > 0) LOG(INFO) << "re-attached to " << adopted << " tasks left by an earlier agent";
}

void TaskManager::RenewLease() {  // in place: see the header
  if (utimensat(AT_FDCWD, lease_file_.c_str(), nullptr, 0) == 0) return;
  const int fd = open(lease_file_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd >= 0) close(fd);
}

void TaskManager::Kill(const TaskKey& key, const std::string& reason) {
  auto it = tasks_.find(key);
  if (it == tasks_.end() || it->second.ended() || it->second.stopping()) return;
  BeginStop(it->second, v1::TASK_KILLED, reason);
}

void TaskManager::BeginStop(Task& task, v1::TaskState as, const std::string& reason) {
  LOG(INFO) << "stopping " << TaskLogName(task.launch.request) << ": " << reason;
  task.SetStop(TaskStop{as, reason, clock_.NowMs() + options_.kill_grace_ms});
  RecordStop(task);
  SignalGroup(task.process.pid, SIGTERM);
  SignalGroup(task.process.pid, SIGCONT);
}

void TaskManager::RecordStop(const Task& task) {
  if (task.launch.record_file.empty() || task.process.pid <= 0) return;
  if (Status s = records_->Save(task.launch.record_file, RecordOf(task, task.launch.request));
      !s.ok())
    LOG(ERROR) << s.message();
}

void TaskManager::Poll() {
  AttachBuiltNetworks();
  if (options_.drivers != nullptr) {
    options_.drivers->RunAnswers();
    lifecycle_.SuspendIdle(suspend_after_ms_, [this] {
      std::set<uint32_t> held;
      for (const auto& [key, task] : tasks_) {
        if (!task.ended()) held.insert(task.launch.board);
      }
      return held;
    });
  }
  for (const ExitedChild& child : ReapChildren()) {
    auto it = by_pid_.find(child.pid);
    if (it == by_pid_.end()) continue;  // an adopted orphan of some task: just reaped
    Task& task = tasks_[it->second];
    by_pid_.erase(it);
    task.process.exited = true;
    task.process.exit_code = child.exit_code;
    task.process.term_signal = child.term_signal;
    if (!task.stopping()) {
      const ShepherdReport report = ReadExitFile(task.launch.exit_file);
      if (report.lost || report.failed) TakeShepherdReport(task);
    }
    SignalGroup(task.process.pid, SIGKILL);  // the task ends with its leader: no stragglers
  }
  if (options_.cgroups != nullptr) {
    std::erase_if(orphan_cgroups_, [&](const std::string& name) {
      return options_.cgroups->KillAll(name) && options_.cgroups->Remove(name);
    });
  }
  const int64_t now = clock_.NowMs();
  for (auto& [key, task] : tasks_) {
    if (task.ended()) continue;
    if (task.launch.attached && !task.process.exited && !ProcessAlive(task.process.pid)) {
      // Not our child: its end shows as the shepherd's absence, its status in the shepherd's file.
      task.process.exited = true;
      TakeShepherdReport(task);
      SignalGroup(task.process.pid, SIGKILL);
    }
    if (!task.process.exited) {
      if (!task.stopping() && task.launch.deadline_ms > 0 && now >= task.launch.deadline_ms) {
        BeginStop(task, v1::TASK_TIMED_OUT, "time limit reached");
      } else if (task.stopping() && now >= task.stop->kill_at_ms) {
        SignalGroup(task.process.pid, SIGKILL);
      }
      continue;
    }
    if (task.launch.attached ? GroupAlive(task.process.pid) : GroupExists(task.process.pid)) {
      SignalGroup(task.process.pid, SIGKILL);
      continue;
    }
    // Processes that left the group die with the task too.
    if (options_.cgroups != nullptr && !options_.cgroups->KillAll(task.launch.cgroup)) continue;
    Finish(task);
  }
  upkeep_.Run(now, tasks_);
}

void TaskManager::Finish(Task& task) {
  if (options_.cgroups != nullptr) {
    if (!task.stop && options_.cgroups->OomKilled(task.launch.cgroup)) {
      const v1::TaskSpec& spec = task.launch.request.task();
      const std::string limit =
          std::to_string(spec.memory_mb() ? spec.memory_mb() : options_.default_memory_mb) +
          " MiB (task.memory_mb)";
      // It ended on its own (not stopped by us), with a reason: its command was killed, or one
      // of its processes was and the command went on to exit.
      task.SetStop(TaskStop{
          v1::TASK_EXITED,
          task.process.term_signal == SIGKILL
              ? "out of memory: the kernel killed it at its limit of " + limit
              : "out of memory: the kernel killed one of its processes at its limit of " + limit});
    }
    if (!options_.cgroups->Remove(task.launch.cgroup)) {
      LOG(WARNING) << "cannot remove the cgroup of job " << task.launch.key.job_id << " task "
                   << task.launch.key.index;
    }
  }
  task.usage = planes_.Counted(task);  // the final counts, before the plane closes
  task.usage.set_rate_ksps(0);
  task.phase = TaskPhase::kEnded;
  task.end_ms = clock_.NowMs();
  task.final_state = task.stop ? task.stop->as : v1::TASK_EXITED;
  if (checkpoints_.Kept(task.launch.request)) {
    if (task.final_state == v1::TASK_EXITED && task.process.exit_code == 0 &&
        task.process.term_signal == 0) {
      checkpoints_.Remove(CheckpointIdOf(task.launch.request));  // done: no attempt needs it
      task.checkpoint = v1::Checkpoint();
    } else {
      task.checkpoint = checkpoints_.Latest(CheckpointIdOf(task.launch.request));
    }
  }
  if (gateway_ != nullptr) gateway_->RemoveTask(task.launch.key);
  task.process.held.reset();
  if (options_.drivers != nullptr) {
    const v1::LaunchRequest& req = task.launch.request;
    lifecycle_.Release(task.launch.board,
                       TaskDirName(req.tenant(), req.tenant_job_id(), req.index(), req.attempt()),
                       TaskLogName(req), [this] {
                         if (options_.confine_devices) RefreshDeviceFilters();
                       });
  }
  boards_.Release(task.launch.board, task.launch.key);
  LOG(INFO) << TaskLogName(task.launch.request)
            << " ended: " << v1::TaskState_Name(task.final_state) << " code "
            << task.process.exit_code << " signal " << task.process.term_signal;
  if (on_ended_) on_ended_();
}

std::string TaskManager::ReconcileBoard(uint32_t index) {
  Board* board = boards_.board(index);
  if (board == nullptr) return "";
  const std::vector<v1::CoreXY> died = boards_.NewlyDead(index);
  const std::string where = options_.node_name + "/" + std::to_string(index);
  const v1::BoardInfo info = board->Describe();
  if (info.health() == 0) {  // a failed board runs nothing
    int stopped = 0;
    for (auto& [key, task] : tasks_) {
      if (task.launch.board != index || task.ended()) continue;
      Lose(task, "board " + where + " failed");
      ++stopped;
    }
    LOG(WARNING) << "board " << where << " failed; " << stopped << " tasks stopped";
    return "; " + std::to_string(stopped) + " tasks on it stopped";
  }
  std::string outcome;
  for (const v1::CoreXY& dead : died) {
    const uint32_t x = dead.x(), y = dead.y();
    LOG(WARNING) << "core " << x << "," << y << " of " << where << " is dead";
    for (auto& [key, task] : tasks_) {
      const auto& r = task.mapping.rect();
      if (task.launch.board != index || task.ended() || task.stopping() || x < r.x() ||
          x >= r.x() + r.width() || y < r.y() || y >= r.y() + r.height()) {
        continue;
      }
      const std::string which =
          "job " + std::to_string(key.job_id) + " task " + std::to_string(key.index);
      if (Remap(task, boards_, *records_)) {
        const auto& n = task.mapping.rect();
        outcome += "; " + which + " moved to " + std::to_string(n.width()) + "x" +
                   std::to_string(n.height()) + "@" + std::to_string(n.x()) + "," +
                   std::to_string(n.y()) + " with the same logical cores";
      } else {
        Lose(task, "core " + std::to_string(x) + "," + std::to_string(y) + " died under it and " +
                       where + " has no room to move it");
        outcome += "; no room to move " + which + ": stopped, its job will be requeued";
      }
    }
  }
  return outcome;
}

size_t TaskManager::active_count() const {
  size_t n = 0;
  for (const auto& [key, task] : tasks_) n += task.ended() ? 0 : 1;
  return n;
}

void TaskManager::Lose(Task& task, const std::string& reason) {
  if (!task.stopping()) BeginStop(task, v1::TASK_LOST, reason);
  if (task.stop->as != v1::TASK_LOST) {
    task.stop->as = v1::TASK_LOST;
    task.stop->reason = reason;
    RecordStop(task);
  }
  SignalGroup(task.process.pid, SIGKILL);
}

void TaskManager::LoseAll(const std::string& reason) {
  for (auto& [key, task] : tasks_) {
    if (!task.ended()) Lose(task, reason);
  }
}

void TaskManager::KillAll() {
  for (auto& [key, task] : tasks_) {
    if (task.ended()) continue;
    if (!task.stopping()) BeginStop(task, v1::TASK_KILLED, "the agent is stopping");
    SignalGroup(task.process.pid, SIGKILL);
  }
}

}  // namespace snn
