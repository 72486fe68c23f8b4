#include "bench/bench_cluster.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "common/base/clock.h"
#include "proto/node.pb.h"
#include "snn_paths.h"
#include "tests/test_util/process.h"

namespace snn::bench {
namespace {

void Stop(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
}

bool WaitFor(const std::function<bool()>& condition, int seconds) {
  for (int i = 0; i < seconds * 100; ++i) {
    if (condition()) return true;
    snn::SleepRealMs(10);
  }
  return condition();
}

}  // namespace

BenchCluster::~BenchCluster() {
  Stop(agent_pid_);
  Stop(master_pid_);
  etcd_.reset();
  auth_.reset();
  if (!dir_.empty()) std::filesystem::remove_all(dir_);
}

void BenchCluster::SetUp(RpcClient& client) const {
  if (auth_) {
    auth_->SetUp(client);
  } else {
    v1::Credential cred;
    cred.set_user("bench");
    client.set_credential(cred);
  }
}

Status BenchCluster::Start(const std::string& auth, const std::vector<std::string>& master_flags,
                           int etcd_members) {
  char tmpl[] = "/tmp/snn_bench_XXXXXX";
  dir_ = mkdtemp(tmpl);
  std::vector<std::string> ha_flags;
  if (etcd_members > 0) {
    etcd_ = std::make_unique<testing::EtcdCluster>(dir_, etcd_members);
    SNN_RETURN_IF_ERROR(etcd_->Start());
    ha_flags = {"--ha_etcd=" + etcd_->endpoints(), "--ha_name=bench"};
  }
  // Another build's master, to alternate with it on the same host.
  const char* other_master = std::getenv("SNN_BENCH_MASTER_BIN");
  std::vector<std::string> master_argv = {other_master ? other_master : SNN_MASTER_BIN,
                                          "--listen=127.0.0.1:0",
                                          "--data_dir=" + dir_ + "/master",
                                          "--port_file=" + dir_ + "/port",
                                          "--minloglevel=1",
                                          "--metrics_listen=",
                                          "--http_listen="};
  if (auth == "munge") {
    auth_ = std::make_unique<testing::AuthKit>(dir_ + "/auth");
    if (!auth_->status().ok()) return auth_->status();
    for (const auto& f : auth_->MasterFlags()) master_argv.push_back(f);
  } else {
    master_argv.push_back("--auth=none");
  }
  master_argv.insert(master_argv.end(), ha_flags.begin(), ha_flags.end());
  master_argv.insert(master_argv.end(), master_flags.begin(), master_flags.end());
  const std::string log = dir_ + "/master.log";
  // As etc/systemd/snn-master.service runs it: malloc on huge pages (fewer page faults as the
  // job table grows). A value already in the environment wins.
  setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", /*overwrite=*/0);
  master_pid_ = testing::SpawnLogged(master_argv, log, log);
  if (!WaitFor([&] { return std::filesystem::exists(dir_ + "/port"); }, 20)) {
    return Unavailable("the master did not start; see " + log);
  }
  int port = 0;
  std::ifstream(dir_ + "/port") >> port;
  master_ = HostPort{"127.0.0.1", static_cast<uint16_t>(port)};
  std::ofstream(dir_ + "/boards.yaml")
      << "boards:\n  - {type: sim-v1, mesh: 4x4, ksps: 1000, streams: 4}\n";
  std::vector<std::string> agent_argv = {
      SNN_AGENT_BIN,
      "--master=" + master_.ToString(),
      "--node_name=bench-node",
      "--boards_file=" + dir_ + "/boards.yaml",
      "--data_dir=" + dir_ + "/agent",
      "--stop_tasks_on_exit=true",
      "--allow_root_tasks",
      "--minloglevel=1",
      "--metrics_listen=",
  };
  if (auth_) {
    const std::string boards = "boards:\n  - {type: sim-v1, mesh: 4x4, ksps: 1000, streams: 4}\n";
    if (!WaitFor([&] { return auth_->ApproveNode(master_, "bench-node", boards).ok(); }, 20)) {
      return Unavailable("cannot approve the node at the master; see " + log);
    }
    for (const auto& f : auth_->AgentFlags("bench-node")) agent_argv.push_back(f);
  } else {
    agent_argv.push_back("--tls=false");
  }
  agent_pid_ = testing::SpawnLogged(agent_argv, dir_ + "/agent.log", dir_ + "/agent.log");
  const bool up = WaitFor(
      [&] {
        RpcClient client(std::chrono::milliseconds(2000));
        SetUp(client);
        if (!client.Connect(master_).ok()) return false;
        auto pool = client.Call(rpc::kPoolStatus, v1::PoolStatusRequest());
        return pool.ok() && pool->nodes_size() > 0 && pool->nodes(0).state() == "UP";
      },
      20);
  if (!up) return Unavailable("the agent did not register; see " + dir_);
  return Status::Ok();
}

}  // namespace snn::bench
