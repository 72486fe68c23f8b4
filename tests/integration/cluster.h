// A real cluster for integration tests: snn-master and snn-agent processes on 127.0.0.1 with
// ephemeral ports and a temp dir, a client, and snnctl runs. The destructor stops every process
// it started (agents stop their tasks), so no test leaves a process behind.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/rpc/rpc_client.h"
#include "proto/job.pb.h"
#include "proto/node.pb.h"
#include "tests/test_util/auth_kit.h"

namespace snn::testing {

// One child process with its output in a log file.
class Daemon {
 public:
  Daemon(const std::vector<std::string>& argv, const std::string& log_path);
  ~Daemon();
  void Signal(int sig);
  // Waits up to `timeout_ms` for the process to exit; true if it did.
  bool WaitExit(int timeout_ms);
  bool alive();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

struct CliRun {
  int exit_code = -1;
  std::string out, err;
  double seconds = 0;
};

class TestCluster {
 public:
  TestCluster();
  ~TestCluster();

  // Starts the master; after a restart it listens on the port it had before.
  void StartMaster(const std::vector<std::string>& extra_flags = {});
  // Starts the master with its HTTP API on an ephemeral port; returns the port (0: it never
  // said which).
  uint16_t StartMasterWithApi(std::vector<std::string> extra_flags = {});
  // The same under a policy file of this text (dir()/policy.yaml).
  uint16_t StartMasterWithApiAndPolicy(const std::string& policy,
                                       std::vector<std::string> extra_flags = {});
  void KillMaster();  // SIGKILL: no chance to flush anything
  void StopMaster();  // SIGTERM: clean stop
  // `prefix` runs the agent under another command (e.g. ip netns exec NS).
  void StartAgent(const std::string& node, const std::string& boards_yaml,
                  const std::vector<std::string>& extra_flags = {},
                  const std::vector<std::string>& prefix = {});
  // As an admin would before the node first registers (snnctl node add NODE --boards FILE):
  // approves what it may declare. StartAgent does it with the agent's boards.
  void ApproveNode(const std::string& node, const std::string& boards_yaml);
  // Off: StartAgent approves nothing (a test of join-token approval).
  void set_approve_agents(bool approve) { approve_agents_ = approve; }
  void StopAgent(const std::string& node);
  void SignalAgent(const std::string& node, int sig);

  // HA (--ha_etcd): master `name` of a group, with its own data dir and log, listening on
  // `listen_host` and reached at `advertise_host` (both 127.0.0.1 by default) on the port it
  // had before when started again. Once one is started, master_address() lists every one
  // started (in that order), and clients, agents and snnctl follow the leader.
  void StartHaMaster(const std::string& name, const std::string& etcd_endpoints,
                     const std::vector<std::string>& extra_flags = {},
                     const std::vector<std::string>& prefix = {},
                     const std::string& listen_host = "127.0.0.1",
                     const std::string& advertise_host = "127.0.0.1");
  void KillHaMaster(const std::string& name);  // SIGKILL
  bool HaMasterAlive(const std::string& name);
  uint16_t ha_master_port(const std::string& name) const;
  std::string ha_master_address(const std::string& name) const;
  // The HA master that answers as leader now ("" when none does).
  std::string HaLeader();

  const std::string& dir() const { return dir_; }
  // The address the master listens on and clients use (default 127.0.0.1); set before starting.
  // The address the master listens and is reached at (its certificate names it).
  void set_master_host(const std::string& host);
  uint16_t master_port() const { return port_; }
  pid_t master_pid() const;
  pid_t agent_pid(const std::string& node) const;  // -1: not started
  std::string master_address() const;

  // A client of this process's user (root in CI: an admin), acting for tenant `tenant`, else
  // for the tenant named `user` (the tests' way of keeping tenants apart).
  std::unique_ptr<RpcClient> Client(const std::string& user = "alice",
                                    const std::string& tenant = "");
  Result<v1::SubmitResponse> Submit(const v1::JobSpec& spec, const std::string& user = "alice");
  Result<v1::JobRecord> Show(uint64_t tenant_job_id, const std::string& user = "alice");
  Result<v1::ListJobsResponse> ListAll();
  Result<v1::PoolStatusResponse> Pool();
  int NodesUp();

  // Waits (polling) until `condition` holds or `timeout_ms` passes.
  static bool WaitUntil(const std::function<bool()>& condition, int timeout_ms = 20000);
  bool WaitForState(uint64_t tenant_job_id, v1::JobState state, int timeout_ms = 20000);

  // snnctl with this cluster's CA and munged, as this process's user, or as Unix user `user`.
  CliRun RunSnnctl(const std::vector<std::string>& args);
  CliRun RunSnnctlAs(const std::string& user, const std::vector<std::string>& args);
  AuthKit& auth() { return *auth_; }
  // snnctl against this cluster's master, acting for `tenant`.
  CliRun Snnctl(const std::vector<std::string>& args, const std::string& tenant = "alice");

  // Waits until job `id` (alice's) runs attempt `attempt` with its first task RUNNING, and
  // returns that task; a default TaskRecord (pid 0) if it never does.
  v1::TaskRecord WaitForRunningTask(uint64_t id, uint32_t attempt = 1, int timeout_ms = 20000);

 private:
  CliRun Run(const std::vector<std::string>& argv);  // output in files under dir()

  std::string dir_;
  bool approve_agents_ = true;
  std::unique_ptr<AuthKit> auth_;
  std::string host_ = "127.0.0.1";
  uint16_t port_ = 0;
  std::unique_ptr<Daemon> master_;
  struct HaMaster {
    std::string address;  // advertised HOST:PORT
    uint16_t port = 0;
    std::unique_ptr<Daemon> daemon;
  };
  std::vector<std::pair<std::string, HaMaster>> ha_masters_;  // in the order first started
  std::map<std::string, std::unique_ptr<Daemon>> agents_;
  // Every (node, data dir) an agent was started on here: their task cgroups are removed.
  std::set<std::pair<std::string, std::string>> agent_data_dirs_;
  int master_starts_ = 0;
};

// A job spec running `script` under /bin/sh -c.
v1::JobSpec ShellJob(const std::string& script, uint32_t cores = 1, uint64_t time_limit_s = 60);

// Two simulated nodes' boards, small enough to fill in tests.
// A whole file as text ("" if it cannot be read).
std::string ReadFile(const std::string& path);

std::string SmallBoards(int boards = 1, int side = 4, int ksps = 1000, int streams = 4);

}  // namespace snn::testing
