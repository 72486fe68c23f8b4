#include "tests/integration/cluster.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/base/clock.h"
#include "nodeagent/tasks/task_cgroups.h"
#include "snn_paths.h"
#include "tests/test_util/etcd_cluster.h"
#include "tests/test_util/process.h"

namespace snn::testing {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path,
            const std::string& err_path) {
  return SpawnLogged(argv, out_path, err_path);
}

}  // namespace

Daemon::Daemon(const std::vector<std::string>& argv, const std::string& log_path) {
  pid_ = Spawn(argv, log_path, log_path);
  EXPECT_GT(pid_, 0) << "cannot start " << argv[0];
}

Daemon::~Daemon() {
  if (pid_ > 0 && !reaped_) {
    Signal(SIGTERM);
    if (!WaitExit(10000)) {
      Signal(SIGKILL);
      WaitExit(10000);
    }
  }
}

void Daemon::Signal(int sig) {
  if (pid_ > 0 && !reaped_) ::kill(pid_, sig);
}

bool Daemon::WaitExit(int timeout_ms) {
  if (reaped_) return true;
  const RealDeadline deadline(timeout_ms);
  while (true) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      return true;
    }
    if (deadline.passed()) return false;
    SleepRealMs(5);
  }
}

bool Daemon::alive() { return !WaitExit(0); }

TestCluster::TestCluster() {
  std::string dir = std::filesystem::temp_directory_path() / "snn_it_XXXXXX";
  dir_ = mkdtemp(dir.data());
  ::chmod(dir_.c_str(), 0755);  // snnctl runs as other users too (RunSnnctlAs)
  auth_ = std::make_unique<AuthKit>(dir_ + "/auth");
  EXPECT_TRUE(auth_->status().ok()) << auth_->status().ToString();
}

namespace {

// The task cgroups (v1) an agent on `data_dir` left: those of tasks still running when a test
// killed it, or stopping when it ended. Their processes are killed and the cgroups removed, so
// that runs of the suite do not pile them up on the host (each test's agents have their own).
void RemoveLeftCgroups(const std::string& node, const std::string& data_dir) {
  auto cgroups = TaskCgroups::Open("v1", AgentCgroupId(node, data_dir));
  if (!cgroups.ok()) return;  // no v1 hierarchies here
  for (const std::string& name : (*cgroups)->Names()) {
    (*cgroups)->KillAll(name);
    const RealDeadline deadline(10000);
    while (!(*cgroups)->Remove(name) && !deadline.passed()) {
      (*cgroups)->KillAll(name);
      SleepRealMs(10);
    }
  }
}  // the agent's own cgroups go with `cgroups`, once empty

}  // namespace

TestCluster::~TestCluster() {
  agents_.clear();  // agents first: they stop their tasks
  for (const auto& [node, data_dir] : agent_data_dirs_) RemoveLeftCgroups(node, data_dir);
  master_.reset();
  ha_masters_.clear();
  auth_.reset();
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir_);
}

pid_t TestCluster::agent_pid(const std::string& node) const {
  auto it = agents_.find(node);
  return it == agents_.end() ? -1 : it->second->pid();
}

pid_t TestCluster::master_pid() const { return master_ ? master_->pid() : -1; }

void TestCluster::set_master_host(const std::string& host) {
  host_ = host;
  const Status named = auth_->NameMasterHost(host);
  EXPECT_TRUE(named.ok()) << named.ToString();
}

std::string TestCluster::master_address() const {
  if (ha_masters_.empty()) return host_ + ":" + std::to_string(port_);
  std::string list;
  for (const auto& [name, m] : ha_masters_) list += (list.empty() ? "" : ",") + m.address;
  return list;
}

void TestCluster::StartHaMaster(const std::string& name, const std::string& etcd_endpoints,
                                const std::vector<std::string>& extra_flags,
                                const std::vector<std::string>& prefix,
                                const std::string& listen_host, const std::string& advertise_host) {
  auto it = std::find_if(ha_masters_.begin(), ha_masters_.end(),
                         [&](const auto& m) { return m.first == name; });
  if (it == ha_masters_.end()) {
    HaMaster m;
    m.port = FreeLoopbackPort();
    m.address = advertise_host + ":" + std::to_string(m.port);
    ha_masters_.emplace_back(name, std::move(m));
    it = std::prev(ha_masters_.end());
  }
  HaMaster& m = it->second;
  const Status named = auth_->NameMasterHost(advertise_host);
  EXPECT_TRUE(named.ok()) << named.ToString();
  std::vector<std::string> argv = {SNN_MASTER_BIN,
                                   "--listen=" + listen_host + ":" + std::to_string(m.port),
                                   "--data_dir=" + dir_ + "/" + name,
                                   "--heartbeat_interval_ms=200",
                                   "--metrics_listen=",
                                   "--http_listen=",
                                   "--ha_etcd=" + etcd_endpoints,
                                   "--ha_name=" + name,
                                   "--ha_advertise=" + m.address,
                                   "--ha_prefix=/snn-test/"};
  for (const auto& f : auth_->MasterFlags()) argv.push_back(f);
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  argv.insert(argv.begin(), prefix.begin(), prefix.end());
  m.daemon = std::make_unique<Daemon>(argv, dir_ + "/" + name + ".log");
  // It answers once it listens (as leader, or with a redirect as a standby).
  ASSERT_TRUE(WaitUntil([&] {
    if (!m.daemon->alive()) return true;
    RpcClient probe(std::chrono::milliseconds(1000));
    auth_->SetUp(probe);
    return probe.Connect(*ParseHostPort(m.address)).ok();
  })) << ReadFile(dir_ + "/" + name + ".log");
  ASSERT_TRUE(m.daemon->alive()) << ReadFile(dir_ + "/" + name + ".log");
}

void TestCluster::KillHaMaster(const std::string& name) {
  for (auto& [n, m] : ha_masters_) {
    if (n != name || !m.daemon) continue;
    m.daemon->Signal(SIGKILL);
    ASSERT_TRUE(m.daemon->WaitExit(10000));
  }
}

bool TestCluster::HaMasterAlive(const std::string& name) {
  for (auto& [n, m] : ha_masters_) {
    if (n == name) return m.daemon && m.daemon->alive();
  }
  return false;
}

uint16_t TestCluster::ha_master_port(const std::string& name) const {
  for (const auto& [n, m] : ha_masters_) {
    if (n == name) return m.port;
  }
  return 0;
}

std::string TestCluster::ha_master_address(const std::string& name) const {
  for (const auto& [n, m] : ha_masters_) {
    if (n == name) return m.address;
  }
  return "";
}

std::string TestCluster::HaLeader() {
  for (auto& [name, m] : ha_masters_) {
    if (!m.daemon || !m.daemon->alive()) continue;
    RpcClient client(std::chrono::milliseconds(2000));
    auth_->SetUp(client);
    if (!client.Connect(*ParseHostPort(m.address)).ok()) continue;
    v1::Credential cred;
    cred.set_tenant("alice");
    client.set_credential(cred);
    // Answered by this master itself, not by the leader a standby sent the call on to.
    if (client.Call(rpc::kPoolStatus, v1::PoolStatusRequest()).ok() &&
        client.target() == m.address) {
      return name;
    }
  }
  return "";
}

uint16_t TestCluster::StartMasterWithApiAndPolicy(const std::string& policy,
                                                  std::vector<std::string> extra_flags) {
  std::ofstream(dir_ + "/policy.yaml") << policy;
  extra_flags.push_back("--policy_file=" + dir_ + "/policy.yaml");
  return StartMasterWithApi(std::move(extra_flags));
}

uint16_t TestCluster::StartMasterWithApi(std::vector<std::string> extra_flags) {
  const std::string port_file = dir_ + "/http.port";
  std::filesystem::remove(port_file);  // a restarted master listens on a new port
  extra_flags.push_back("--http_listen=127.0.0.1:0");
  extra_flags.push_back("--http_port_file=" + port_file);
  StartMaster(extra_flags);
  // The master writes it once the API listens, after its RPC port.
  uint16_t port = 0;
  WaitUntil([&] {
    const std::string text = ReadFile(port_file);
    if (!text.empty()) port = static_cast<uint16_t>(std::stoi(text));
    return port != 0;
  });
  return port;
}

void TestCluster::StartMaster(const std::vector<std::string>& extra_flags) {
  const std::string port_file = dir_ + "/master.port";
  std::filesystem::remove(port_file);
  std::vector<std::string> argv = {
      SNN_MASTER_BIN, "--listen=" + host_ + ":" + std::to_string(port_),
      "--data_dir=" + dir_ + "/master", "--port_file=" + port_file, "--heartbeat_interval_ms=200",
      // No metrics endpoint unless a test asks (its exposer takes a second to stop).
      "--metrics_listen=", "--http_listen="};
  for (const auto& f : auth_->MasterFlags()) argv.push_back(f);
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  ++master_starts_;
  master_ = std::make_unique<Daemon>(argv, dir_ + "/master.log");
  ASSERT_TRUE(WaitUntil([&] { return std::filesystem::exists(port_file) || !master_->alive(); }))
      << ReadFile(dir_ + "/master.log");
  ASSERT_TRUE(master_->alive()) << ReadFile(dir_ + "/master.log");
  port_ = static_cast<uint16_t>(std::stoi(ReadFile(port_file)));
}

void TestCluster::KillMaster() {
  master_->Signal(SIGKILL);
  ASSERT_TRUE(master_->WaitExit(10000));
  master_.reset();
}

void TestCluster::StopMaster() {
  master_->Signal(SIGTERM);
  ASSERT_TRUE(master_->WaitExit(10000));
  master_.reset();
}

void TestCluster::StartAgent(const std::string& node, const std::string& boards_yaml,
                             const std::vector<std::string>& extra_flags,
                             const std::vector<std::string>& prefix) {
  const std::string boards = dir_ + "/" + node + ".boards.yaml";
  std::ofstream(boards) << boards_yaml;
  if (approve_agents_) ApproveNode(node, boards_yaml);
  // The data dir the agent runs on names its cgroups: a test's own --data_dir wins, as the last
  // of a flag given twice does.
  std::string data_dir = dir_ + "/" + node;
  for (const std::string& f : extra_flags) {
    if (f.rfind("--data_dir=", 0) == 0) data_dir = f.substr(std::string("--data_dir=").size());
  }
  agent_data_dirs_.emplace(node, data_dir);
  std::vector<std::string> argv = {SNN_AGENT_BIN, "--master=" + master_address(),
                                   "--node_name=" + node, "--boards_file=" + boards,
                                   "--data_dir=" + dir_ + "/" + node, "--kill_grace_ms=500",
                                   "--reconnect_ms=100", "--tick_ms=20", "--metrics_listen=",
                                   // Tests leave nothing behind; re-attach tests override this.
                                   "--stop_tasks_on_exit=true",
                                   // Most tests submit as root; isolation tests as other users.
                                   "--allow_root_tasks"};
  for (const auto& f : auth_->AgentFlags(node)) argv.push_back(f);
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  argv.insert(argv.begin(), prefix.begin(), prefix.end());
  agents_[node] = std::make_unique<Daemon>(argv, dir_ + "/" + node + ".log");
}

void TestCluster::ApproveNode(const std::string& node, const std::string& boards_yaml) {
  if (port_ == 0 && ha_masters_.empty()) return;  // no master of ours: a test's fake one
  auto req = AuthKit::NodeAddRequestFor(node, boards_yaml);
  if (!req.ok()) return;  // a test of a bad boards file: the agent refuses to start anyway
  const Status approved = Client("root")->Call(rpc::kNodeAdd, *req).status();
  EXPECT_TRUE(approved.ok()) << "approving node " << node << ": " << approved.ToString();
}

void TestCluster::StopAgent(const std::string& node) { agents_.erase(node); }

void TestCluster::SignalAgent(const std::string& node, int sig) {
  if (agents_.count(node)) agents_[node]->Signal(sig);
}

std::unique_ptr<RpcClient> TestCluster::Client(const std::string& user, const std::string& tenant) {
  auto client = std::make_unique<RpcClient>(std::chrono::milliseconds(5000));
  auth_->SetUp(*client);
  Status s = ha_masters_.empty() ? client->Connect(HostPort{host_, port_})
                                 : client->ConnectAny(*ParseHostPortList(master_address()));
  EXPECT_TRUE(s.ok()) << s.ToString();
  v1::Credential cred;
  cred.set_tenant(tenant.empty() ? user : tenant);
  client->set_credential(cred);
  return client;
}

Result<v1::SubmitResponse> TestCluster::Submit(const v1::JobSpec& spec, const std::string& user) {
  v1::SubmitRequest req;
  *req.mutable_spec() = spec;
  return Client(user)->Call(rpc::kJobSubmit, req);
}

Result<v1::JobRecord> TestCluster::Show(uint64_t tenant_job_id, const std::string& user) {
  v1::ShowJobRequest req;
  req.mutable_job()->set_tenant_job_id(tenant_job_id);
  auto resp = Client(user)->Call(rpc::kJobShow, req);
  if (!resp.ok()) return resp.status();
  return resp->job();
}

Result<v1::ListJobsResponse> TestCluster::ListAll() {
  v1::ListJobsRequest req;
  req.set_all_tenants(true);
  auto client = Client();
  v1::ListJobsResponse all;
  while (true) {
    auto page = client->Call(rpc::kJobList, req);
    if (!page.ok()) return page.status();
    for (auto& job : *page->mutable_jobs()) *all.add_jobs() = std::move(job);
    if (!page->more() || page->next_after_id() <= req.after_id()) return all;
    req.set_after_id(page->next_after_id());
  }
}

Result<v1::PoolStatusResponse> TestCluster::Pool() {
  return Client()->Call(rpc::kPoolStatus, v1::PoolStatusRequest());
}

int TestCluster::NodesUp() {
  auto pool = Pool();
  if (!pool.ok()) return -1;
  int up = 0;
  for (const auto& n : pool->nodes()) up += n.state() == "UP" ? 1 : 0;
  return up;
}

bool TestCluster::WaitUntil(const std::function<bool()>& condition, int timeout_ms) {
  return PollUntil(condition, timeout_ms, /*poll_ms=*/20);
}

bool TestCluster::WaitForState(uint64_t tenant_job_id, v1::JobState state, int timeout_ms) {
  return WaitUntil(
      [&] {
        auto job = Show(tenant_job_id);
        return job.ok() && job->state() == state;
      },
      timeout_ms);
}

CliRun TestCluster::RunSnnctl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {SNNCTL_BIN};
  for (const auto& f : auth_->SnnctlFlags()) argv.push_back(f);
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

CliRun TestCluster::RunSnnctlAs(const std::string& user, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {SNNCTL_BIN, "--master", master_address()};
  for (const auto& f : auth_->SnnctlFlags()) argv.push_back(f);
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(AuthKit::AsUser(user, argv));
}

CliRun TestCluster::Run(const std::vector<std::string>& argv) {
  static int run = 0;
  const std::string out = dir_ + "/snnctl." + std::to_string(++run) + ".out";
  const std::string err = dir_ + "/snnctl." + std::to_string(run) + ".err";
  const Stopwatch took;
  CliRun result;
  const pid_t pid = Spawn(argv, out, err);
  int status = 0;
  waitpid(pid, &status, 0);
  result.seconds = took.Seconds();
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = ReadFile(out);
  result.err = ReadFile(err);
  return result;
}

CliRun TestCluster::Snnctl(const std::vector<std::string>& args, const std::string& tenant) {
  std::vector<std::string> full = {"--master", master_address(), "--tenant", tenant};
  full.insert(full.end(), args.begin(), args.end());
  return RunSnnctl(full);
}

v1::TaskRecord TestCluster::WaitForRunningTask(uint64_t id, uint32_t attempt, int timeout_ms) {
  v1::TaskRecord task;
  WaitUntil(
      [&] {
        auto job = Show(id);
        if (!job.ok() || job->attempt() != attempt || job->tasks_size() == 0 ||
            job->tasks(0).state() != v1::TASK_RUNNING) {
          return false;
        }
        task = job->tasks(0);
        return true;
      },
      timeout_ms);
  return task;
}

v1::JobSpec ShellJob(const std::string& script, uint32_t cores, uint64_t time_limit_s) {
  v1::JobSpec spec;
  spec.set_name("it");
  spec.set_time_limit_s(time_limit_s);
  spec.set_min_replicas(1);
  spec.mutable_task()->set_command("/bin/sh");
  spec.mutable_task()->add_args("-c");
  spec.mutable_task()->add_args(script);
  auto* r = spec.mutable_task()->mutable_resources();
  r->set_cores(cores);
  r->set_ksps(10);
  r->set_streams(1);
  return spec;
}

std::string SmallBoards(int boards, int side, int ksps, int streams) {
  std::string yaml = "backend: sim\nboards:\n";
  for (int i = 0; i < boards; ++i) {
    yaml += "  - {type: sim-v1, mesh: " + std::to_string(side) + "x" + std::to_string(side) +
            ", ksps: " + std::to_string(ksps) + ", streams: " + std::to_string(streams) + "}\n";
  }
  return yaml;
}

}  // namespace snn::testing
