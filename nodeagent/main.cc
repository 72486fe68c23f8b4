// snn-agent: the node agent. Flags may come from a file: --flagfile=PATH.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <optional>
#include <sstream>

#include "common/base/clock.h"
#include "common/base/duration.h"
#include "common/base/file_util.h"
#include "common/daemon/board_config.h"
#include "common/daemon/daemon_init.h"
#include "nodeagent/agent.h"
#include "nodeagent/drivers/driver_boards.h"
#include "nodeagent/hal/sim_board.h"
#include "nodeagent/tasks/device_filter.h"
#include "nodeagent/tasks/launcher.h"

DEFINE_string(metrics_listen, "127.0.0.1:7132",
              "serve Prometheus metrics at http://HOST:PORT/metrics (port 0 picks one; empty: "
              "no endpoint)");
DEFINE_string(metrics_port_file, "", "write the metrics endpoint's bound port to this file");
DEFINE_string(master, "127.0.0.1:7130",
              "the master's address, HOST:PORT; with an HA group, every master's, comma-separated "
              "(the agent finds the leader)");
DEFINE_string(node_name, "", "this node's name (default: the host name)");
DEFINE_string(pools, "default", "comma-separated pools this node belongs to");
DEFINE_string(boards_file, "/etc/snn/boards.yaml", "YAML file describing this node's boards");
DEFINE_string(data_dir, "/var/lib/snn/agent", "directory for task output and agent state");
DEFINE_int64(kill_grace_ms, 5000, "time between SIGTERM and SIGKILL when stopping a task");
DEFINE_int64(reconnect_ms, 1000, "delay before reconnecting to the master");
DEFINE_int64(tick_ms, 100, "how often tasks are checked (time limits, exits)");
DEFINE_uint64(max_frame_bytes, 4 << 20, "largest accepted frame");
DEFINE_bool(tls, true,
            "talk to the master over TLS 1.3 with this node's certificate (false only for a "
            "master run with --auth=none)");
DEFINE_string(tls_dir, "/etc/snn/tls",
              "ca.crt (the cluster's CA, from the operator) and node.pem (this node's "
              "certificate and key, written at enrolment and renewal)");
DEFINE_string(join_token_file, "",
              "a file holding the one-time join token an admin made with `snnctl node token "
              "NODE`; used when the node has no certificate yet");
DEFINE_string(join_token, "", "the join token itself (visible in ps; prefer --join_token_file)");
DEFINE_string(shepherd, "", "the snn-shepherd binary (default: beside snn-agent)");
DEFINE_bool(stop_tasks_on_exit, false,
            "stop every task when the agent stops; by default tasks keep running and the next "
            "agent on this data dir re-attaches to them");

DEFINE_string(gateway_socket, "",
              "the spike gateway's Unix socket, given to tasks as SNN_GATEWAY "
              "(default: DATA_DIR/gateway.sock)");
DEFINE_uint32(gateway_burst_ms, 20,
              "each task's KSPS token bucket holds this many milliseconds of its budget");

DEFINE_string(checkpoint_dir, "",
              "root of the tasks' checkpoint directories ($SNN_CHECKPOINT_DIR, one per job task, "
              "kept across attempts). Put it on a file system every node mounts at the same path "
              "so that a task moved to another node finds its checkpoints (default: "
              "DATA_DIR/checkpoints, enough on one host); 'off' for none");
DEFINE_string(checkpoint_keep, "7d",
              "how long a checkpoint directory is kept after its task last ran, unless the task "
              "ended with exit 0 (then it goes at once): 90s, 10m, 2h, 7d, ...");

DEFINE_string(task_keep, "30d",
              "how long a task's directory (its output for snnctl logs, its results for snnctl "
              "results) stays on the node after the task ended: 90s, 10m, 2h, 30d, ...; 'forever' "
              "keeps them");

DEFINE_bool(allow_root_tasks, false,
            "run the tasks of jobs root submitted as root (otherwise they fail to launch); every "
            "other job's tasks run as the user who submitted it");
DEFINE_uint64(sim_board_memory_mb, 512,
              "simulated boards: the memory the simulator (in the agent) may hold for all the "
              "networks on one board; each task gets its cores' share, and a network needing more "
              "is refused with that reason");
DEFINE_bool(task_hide_processes, true,
            "tasks (run as their users, by a root agent) see only their own user's processes: a "
            "private /proc mounted with hidepid=invisible (Linux 5.8 or later); a task that "
            "cannot have it does not run");
DEFINE_bool(task_isolate_boards, true,
            "every task (of a root agent) gets a network of its own in which only its boards' "
            "endpoints answer: a pass-through board's (UDP, relayed by the task's shepherd), a "
            "simulated board's none. Other boards, other tenants' boards, management ports and "
            "everything else are out of reach (the spike gateway, a Unix socket, is not); a task "
            "that cannot have it does not run");
DEFINE_bool(task_confine_devices, true,
            "every task is kept from the device nodes of the boards it does not hold (the boards "
            "file's devices:), by its cgroup (v1's devices controller, or an eBPF device filter "
            "on v2); a task that cannot be does not run");
DEFINE_string(cgroups, "auto",
              "each task's cgroup, with its memory and process limits: auto (v2 if its memory and "
              "pids controllers are available, else v1, else none, with a warning), v2, v1, off");
DEFINE_string(task_path, "/usr/local/bin:/usr/bin:/bin",
              "the PATH every task starts with (a job's task.env may set its own); tasks never "
              "inherit the agent's environment");
DEFINE_uint64(task_memory_max_mb, 0,
              "the most memory a job may ask for a task (task.memory_mb), MiB (0: this node's "
              "physical memory)");
DEFINE_uint64(task_memory_mb, 4096, "memory limit of a task whose job gives no task.memory_mb");
DEFINE_uint32(task_max_processes, 4096,
              "process and thread limit of a task whose job gives no task.max_processes");

namespace {

// A flag's mistake (exit 2) or a failure to start (exit 1), with what to log.
struct Refusal {
  int exit_code;
  std::string message;
};

// --task_keep as milliseconds (0: forever).
std::optional<Refusal> ReadTaskKeep(int64_t& task_keep_ms) {
  task_keep_ms = 0;
  if (FLAGS_task_keep == "forever") return std::nullopt;
  auto keep = snn::ParseDurationSeconds(FLAGS_task_keep);
  if (!keep.ok() || *keep == 0) {
    return Refusal{2, "--task_keep: " + (keep.ok() ? std::string("must be above 0 (or 'forever')")
                                                   : keep.status().message())};
  }
  task_keep_ms = static_cast<int64_t>(*keep) * 1000;
  return std::nullopt;
}

// Each board's device nodes: one that is there but is no device is a mistake in the file.
std::optional<Refusal> CheckDevices(const snn::BoardsFile& boards_file) {
  for (size_t i = 0; i < boards_file.board_drivers.size(); ++i) {
    for (const std::string& path : boards_file.board_drivers[i].devices) {
      auto device = snn::DeviceAt(path);
      if (device.ok()) {
        LOG(INFO) << "board " << i << ": device " << path << " (" << snn::DeviceRule(*device)
                  << "): only its task may open it";
      } else if (device.status().code() == snn::Code::kNotFound) {
        LOG(WARNING) << "board " << i << ": device " << path
                     << " is not there (unplugged?): nothing to keep from other tasks until it is";
      } else {
        return Refusal{2, FLAGS_boards_file + ": boards[" + std::to_string(i) +
                              "].devices: " + device.status().message()};
      }
    }
  }
  return std::nullopt;
}

std::string NodeName() {
  if (!FLAGS_node_name.empty()) return FLAGS_node_name;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

// The link to the master: who this node is, where its boards sit, how it proves it.
std::optional<Refusal> FillLink(snn::AgentConfig& config, const std::string& node_name,
                                const std::vector<snn::HostPort>& master,
                                const snn::BoardsFile& boards_file) {
  config.link.masters = master;
  config.link.node_name = node_name;
  std::stringstream ss(FLAGS_pools);
  for (std::string p; std::getline(ss, p, ',');) {
    if (!p.empty()) config.link.pools.push_back(p);
  }
  if (config.link.pools.empty()) return Refusal{2, "--pools names no pool"};
  config.link.switch_name = boards_file.switch_name;
  config.link.links = boards_file.links;
  config.link.reconnect_ms = FLAGS_reconnect_ms;
  config.link.max_frame_bytes = FLAGS_max_frame_bytes;
  config.link.tls = FLAGS_tls;
  config.link.tls_dir = FLAGS_tls_dir;
  config.link.join_token = FLAGS_join_token;
  if (!FLAGS_join_token_file.empty()) {
    auto token = snn::ReadWholeFile(FLAGS_join_token_file, "the join token file");
    if (!token.ok()) return Refusal{2, token.status().message()};
    config.link.join_token_file = FLAGS_join_token_file;
  }
  std::error_code exists_ec;
  if (FLAGS_tls && !std::filesystem::exists(FLAGS_tls_dir + "/ca.crt", exists_ec)) {
    return Refusal{2, "no CA certificate " + FLAGS_tls_dir +
                          "/ca.crt: copy the cluster's ca.crt there (see docs/operator-guide.md, "
                          "Security)"};
  }
  return std::nullopt;
}

// Tasks run as their users and must pass through to their own directories (never list them).
void OpenDataDirToTasks(const std::string& data_dir) {
  struct stat data_dir_stat {};
  if (stat(data_dir.c_str(), &data_dir_stat) == 0 && (data_dir_stat.st_mode & 0111) != 0111) {
    LOG(WARNING) << "--data_dir " << data_dir
                 << " was not searchable by every user; tasks need to reach their directories: "
                    "setting its mode to 0711";
    chmod(data_dir.c_str(), (data_dir_stat.st_mode & 0700) | 0711);
  }
}

// How tasks run here: directories, limits, checkpoints, the shepherd, isolation.
std::optional<Refusal> FillTasks(snn::AgentConfig& config, const std::string& node_name,
                                 int64_t task_keep_ms, const snn::BoardsFile& boards_file) {
  config.tasks.data_dir = std::filesystem::absolute(FLAGS_data_dir).string();
  OpenDataDirToTasks(config.tasks.data_dir);
  config.tasks.node_name = node_name;
  config.tasks.kill_grace_ms = FLAGS_kill_grace_ms;
  if (FLAGS_checkpoint_dir != "off") {
    config.tasks.checkpoint_root =
        FLAGS_checkpoint_dir.empty()
            ? config.tasks.data_dir + "/checkpoints"
            : std::filesystem::absolute(FLAGS_checkpoint_dir).lexically_normal().string();
  }
  auto keep = snn::ParseDurationSeconds(FLAGS_checkpoint_keep);
  if (!keep.ok()) return Refusal{2, "--checkpoint_keep: " + keep.status().message()};
  config.tasks.checkpoint_keep_ms = static_cast<int64_t>(*keep) * 1000;
  config.tasks.task_keep_ms = task_keep_ms;
  config.tasks.base_env = {{"PATH", FLAGS_task_path}};
  config.tasks.max_memory_mb =
      FLAGS_task_memory_max_mb > 0
          ? FLAGS_task_memory_max_mb
          : static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE) >> 20;
  config.tasks.shepherd = FLAGS_shepherd;
  if (config.tasks.shepherd.empty()) {
    std::error_code ec;
    config.tasks.shepherd =
        (std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "snn-shepherd")
            .string();
  }
  if (access(config.tasks.shepherd.c_str(), X_OK) != 0) {
    return Refusal{2, "cannot run the shepherd " + config.tasks.shepherd + " (set --shepherd)"};
  }
  config.tasks.allow_root_tasks = FLAGS_allow_root_tasks;
  config.tasks.hide_processes = FLAGS_task_hide_processes;
  config.tasks.isolate_boards = FLAGS_task_isolate_boards;
  config.tasks.confine_devices = FLAGS_task_confine_devices;
  config.tasks.default_memory_mb = FLAGS_task_memory_mb;
  config.tasks.default_max_processes = FLAGS_task_max_processes;
  config.tasks.runtimes = boards_file.runtimes;
  config.tasks.gateway_burst_ms = static_cast<uint32_t>(FLAGS_gateway_burst_ms);
  return std::nullopt;
}

// The tasks' cgroups (or none, said so).
snn::Result<std::unique_ptr<snn::TaskCgroups>> OpenCgroups(const std::string& node_name,
                                                           const std::string& data_dir) {
  auto cgroups = snn::TaskCgroups::Open(FLAGS_cgroups, snn::AgentCgroupId(node_name, data_dir));
  if (!cgroups.ok()) {
    return snn::InvalidArgument("--cgroups=" + FLAGS_cgroups + ": " + cgroups.status().message());
  }
  if ((*cgroups)->version() == snn::TaskCgroups::Version::kOff) {
    LOG(WARNING) << "tasks run without memory or process limits: " << (*cgroups)->Describe();
  } else {
    LOG(INFO) << "tasks run in their own cgroups: " << (*cgroups)->Describe();
  }
  if (geteuid() != 0) {
    LOG(WARNING) << "the agent is not root: every task runs as uid " << geteuid()
                 << ", not as the user who submitted it";
  }
  return cgroups;
}

int Refused(const Refusal& refusal) {
  LOG(ERROR) << refusal.message;
  return refusal.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  snn::InitDaemon(&argc, &argv,
                  "snn-agent --master=HOST:PORT --boards_file=FILE [--flagfile=FILE]\n"
                  "The node agent of the SNN cluster resource manager.");

  auto master = snn::ParseHostPortList(FLAGS_master);
  if (!master.ok()) return Refused({2, "--master: " + master.status().message()});
  int64_t task_keep_ms = 0;  // forever
  if (auto refused = ReadTaskKeep(task_keep_ms)) return Refused(*refused);
  auto boards_file = snn::LoadBoardsFile(FLAGS_boards_file);
  if (!boards_file.ok()) return Refused({2, boards_file.status().message()});
  if (auto refused = CheckDevices(*boards_file)) return Refused(*refused);
  const std::string node_name = NodeName();
  snn::AgentConfig config;
  if (auto refused = FillLink(config, node_name, *master, *boards_file)) return Refused(*refused);
  if (auto s = snn::CreateDataDir(FLAGS_data_dir); !s.ok()) return Refused({1, s.message()});
  if (FLAGS_sim_board_memory_mb < 1 || FLAGS_sim_board_memory_mb > (uint64_t{1} << 30)) {
    return Refused({2, "--sim_board_memory_mb must be 1 to 2^30"});
  }
  snn::SystemClock clock;
  // Drivers first (docs/drivers.md): the boards they run are booted and checked before serving.
  std::unique_ptr<snn::DriverPool> drivers;
  if (!boards_file->drivers.empty()) {
    drivers = std::make_unique<snn::DriverPool>(clock, boards_file->drivers, FLAGS_data_dir,
                                                "snn-agent on " + node_name);
    if (auto s = drivers->Start(); !s.ok()) return Refused({1, s.message()});
  }
  auto boards =
      snn::MakeBoards(*boards_file, drivers.get(), uint64_t{FLAGS_sim_board_memory_mb} << 20);
  if (!boards.ok()) return Refused({1, FLAGS_boards_file + ": " + boards.status().message()});
  if (auto refused = FillTasks(config, node_name, task_keep_ms, *boards_file)) {
    return Refused(*refused);
  }
  auto cgroups = OpenCgroups(node_name, config.tasks.data_dir);
  if (!cgroups.ok()) return Refused({2, cgroups.status().message()});
  config.tasks.cgroups = cgroups->get();
  config.stop_tasks_on_exit = FLAGS_stop_tasks_on_exit;
  config.gateway_socket =
      FLAGS_gateway_socket.empty() ? config.tasks.data_dir + "/gateway.sock" : FLAGS_gateway_socket;
  config.tick_ms = FLAGS_tick_ms;
  config.metrics_listen = FLAGS_metrics_listen;
  config.metrics_port_file = FLAGS_metrics_port_file;
  config.handle_signals = true;
  config.tasks.drivers = drivers.get();

  snn::BecomeChildSubreaper();
  snn::Agent agent(config, clock, std::move(boards).value());
  LOG(INFO) << "snn-agent " << node_name << " with " << boards_file->boards.size()
            << " boards, master " << FLAGS_master;
  if (auto s = agent.Start(); !s.ok()) return Refused({1, s.message()});
  agent.Run();
  LOG(INFO) << "snn-agent stopped";
  return 0;
}
