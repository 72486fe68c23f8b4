// snn-chaos: keeps submitting jobs to a real master and agents on 127.0.0.1 while killing agents
// (SIGKILL or SIGTERM, back after a random delay, sometimes past the heartbeat timeout) and the
// master (SIGKILL, back on the same data dir and port) at random. Then it lets every job finish
// and checks: every acknowledged job is there exactly once, in a terminal state or PENDING or
// RUNNING; no core was held by two live tasks at once and no task ran as two copies at once (the
// tasks' own locks say so); no task attempt was launched twice. Prints the jobs, the kills and
// the violations, and `violations: N` as its last line; exits 1 if N > 0. With --stress=N, N
// busy processes burn CPU beside it for the whole run: the slow path of every daemon.
#include <gflags/gflags.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "common/base/clock.h"
#include "common/daemon/program_flags.h"
#include "common/rpc/rpc_client.h"
#include "proto/job.pb.h"
#include "proto/node.pb.h"
#include "snn_paths.h"
#include "tests/test_util/auth_kit.h"
#include "tests/test_util/process.h"

DEFINE_int32(seconds, 300, "how long to submit and kill");
DEFINE_int32(agents, 3, "agents (nodes)");
DEFINE_uint32(seed, 1, "random seed");
DEFINE_int32(submit_every_ms, 60, "time between submits");
DEFINE_int32(fault_every_ms, 2500, "mean time between faults");
DEFINE_bool(keep, false, "keep the work directory");
DEFINE_int32(stress, 0,
             "busy processes burning CPU beside the run for its whole length, so that the "
             "daemons run slow (the machine under load)");

namespace {

using snn::testing::SpawnLogged;

struct Daemon {
  std::vector<std::string> argv;
  std::string log;
  pid_t pid = -1;
  void Start() { pid = SpawnLogged(argv, log, log); }
  void Signal(int sig) {
    if (pid <= 0) return;
    kill(pid, sig);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double Since(snn::MonotonicTime t0) {
  return std::chrono::duration<double>(snn::MonotonicNow() - t0).count();
}

struct Chaos {
  std::string dir;
  std::unique_ptr<snn::testing::AuthKit> auth;
  uint16_t port = 0;
  Daemon master;
  std::vector<Daemon> agents;
  std::unique_ptr<snn::RpcClient> client;

  snn::RpcClient* Client() {
    if (client) return client.get();
    client = std::make_unique<snn::RpcClient>(std::chrono::milliseconds(2000));
    auth->SetUp(*client);
    if (!client->Connect(snn::HostPort{"127.0.0.1", port}).ok()) {
      client.reset();
      return nullptr;
    }
    snn::v1::Credential cred;
    cred.set_tenant("chaos");
    client->set_credential(cred);
    return client.get();
  }

  template <typename Request, typename Response>
  snn::Result<Response> Call(const snn::RpcMethod<Request, Response>& method,
                             const std::type_identity_t<Request>& req) {
    snn::RpcClient* c = Client();
    if (c == nullptr) return snn::Unavailable("master unreachable");
    auto r = c->Call(method, req);
    if (!r.ok() && (r.status().code() == snn::Code::kUnavailable ||
                    r.status().code() == snn::Code::kDeadlineExceeded)) {
      client.reset();
    }
    return r;
  }

  int NodesUp() {
    auto pool = Call(snn::rpc::kPoolStatus, snn::v1::PoolStatusRequest());
    if (!pool.ok()) return -1;
    int up = 0;
    for (const auto& n : pool->nodes()) up += n.state() == "UP";
    return up;
  }

  bool WaitFor(const std::function<bool()>& condition, double seconds) {
    const auto t0 = snn::MonotonicNow();
    while (Since(t0) < seconds) {
      if (condition()) return true;
      snn::SleepRealMs(100);
    }
    return false;
  }
};

}  // namespace

// Processes that spin for as long as this object lives (and die with the chaos run).
class Stress {
 public:
  explicit Stress(int n) {
    for (int i = 0; i < n; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        volatile uint64_t x = 0;
        while (true) x = x * 6364136223846793005ull + 1;
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~Stress() {
    for (pid_t pid : pids_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }

 private:
  std::vector<pid_t> pids_;
};

int main(int argc, char** argv) {
  snn::ParseProgramFlags(&argc, &argv, "snn-chaos [FLAGS]");
  signal(SIGPIPE, SIG_IGN);
  Stress stress(FLAGS_stress);
  std::mt19937 rng(FLAGS_seed);
  Chaos c;
  char tmpl[] = "/tmp/snn_chaos_XXXXXX";
  c.dir = mkdtemp(tmpl);
  std::filesystem::create_directories(c.dir + "/locks");
  c.auth = std::make_unique<snn::testing::AuthKit>(c.dir + "/auth");
  if (!c.auth->status().ok()) {
    fprintf(stderr, "%s\n", c.auth->status().ToString().c_str());
    return 2;
  }
  std::ofstream(c.dir + "/boards.yaml")
      << "boards:\n  - {type: sim-v1, mesh: 6x6, ksps: 100000, streams: 16}\n"
         "  - {type: sim-v1, mesh: 6x6, ksps: 100000, streams: 16}\n";

  c.master.argv = {SNN_MASTER_BIN,
                   "--listen=127.0.0.1:0",
                   "--data_dir=" + c.dir + "/master",
                   "--port_file=" + c.dir + "/port",
                   "--heartbeat_interval_ms=200",
                   "--heartbeat_timeout_ms=3000",
                   "--agent_lease_ms=1500",
                   "--metrics_listen=",
                   "--http_listen="};
  for (const auto& f : c.auth->MasterFlags()) c.master.argv.push_back(f);
  c.master.log = c.dir + "/master.log";
  c.master.Start();
  if (!c.WaitFor([&] { return std::filesystem::exists(c.dir + "/port"); }, 20)) {
    fprintf(stderr, "the master did not start; see %s\n", c.master.log.c_str());
    return 2;
  }
  c.port = static_cast<uint16_t>(std::stoi(ReadFile(c.dir + "/port")));
  c.master.argv[1] = "--listen=127.0.0.1:" + std::to_string(c.port);
  for (int i = 1; i <= FLAGS_agents; ++i) {
    Daemon a;
    const std::string node = "node" + std::to_string(i);
    if (!c.WaitFor(
            [&] {
              return c.auth
                  ->ApproveNode({"127.0.0.1", c.port}, node, ReadFile(c.dir + "/boards.yaml"))
                  .ok();
            },
            20)) {
      fprintf(stderr, "cannot approve node %s at the master\n", node.c_str());
      return 2;
    }
    a.argv = {SNN_AGENT_BIN,
              "--master=127.0.0.1:" + std::to_string(c.port),
              "--node_name=" + node,
              "--boards_file=" + c.dir + "/boards.yaml",
              "--data_dir=" + c.dir + "/" + node,
              "--kill_grace_ms=300",
              "--reconnect_ms=200",
              "--tick_ms=50",
              "--metrics_listen=",
              "--stop_tasks_on_exit=false",
              "--allow_root_tasks"};
    for (const auto& f : c.auth->AgentFlags(node)) a.argv.push_back(f);
    a.log = c.dir + "/" + node + ".log";
    a.Start();
    c.agents.push_back(a);
  }
  if (!c.WaitFor([&] { return c.NodesUp() == FLAGS_agents; }, 30)) {
    fprintf(stderr, "the agents did not register\n");
    return 2;
  }

  // Submit and kill.
  std::set<uint64_t> acknowledged;
  uint64_t submit_errors = 0;
  std::vector<std::string> kills;
  struct Restart {
    double at;
    int which;  // -1: master
  };
  std::vector<Restart> restarts;
  const auto t0 = snn::MonotonicNow();
  double next_fault = FLAGS_fault_every_ms / 1000.0;
  std::uniform_real_distribution<double> unit(0, 1);
  while (Since(t0) < FLAGS_seconds) {
    snn::v1::SubmitRequest req;
    auto* spec = req.mutable_spec();
    spec->set_name("chaos");
    spec->set_time_limit_s(120);
    spec->mutable_task()->set_command(SNN_CHAOS_TASK_BIN);
    spec->mutable_task()->add_args(c.dir);
    spec->mutable_task()->add_args(std::to_string(0.2 + 1.8 * unit(rng)));
    auto* r = spec->mutable_task()->mutable_resources();
    r->set_cores(1 + rng() % 6);
    r->set_ksps(10);
    r->set_streams(1);
    auto resp = c.Call(snn::rpc::kJobSubmit, req);
    if (resp.ok()) {
      acknowledged.insert(resp->job_id());
    } else {
      ++submit_errors;
    }
    const double now = Since(t0);
    for (auto it = restarts.begin(); it != restarts.end();) {
      if (it->at > now) {
        ++it;
        continue;
      }
      (it->which < 0 ? c.master : c.agents[it->which]).Start();
      it = restarts.erase(it);
    }
    if (now >= next_fault) {
      next_fault = now + (0.5 + unit(rng)) * FLAGS_fault_every_ms / 1000.0;
      const double pick = unit(rng);
      char line[160];
      if (pick < 0.25 && c.master.pid > 0) {
        const double back = 0.3 + 1.5 * unit(rng);
        c.master.Signal(SIGKILL);
        c.client.reset();
        restarts.push_back({now + back, -1});
        snprintf(line, sizeof line, "%7.1f s  SIGKILL master, back after %.1f s", now, back);
      } else {
        const int which = static_cast<int>(rng() % c.agents.size());
        if (c.agents[which].pid <= 0) continue;
        const int sig = pick < 0.8 ? SIGKILL : SIGTERM;
        const double back = 0.2 + 4.5 * unit(rng);  // sometimes past the 3 s heartbeat timeout
        c.agents[which].Signal(sig);
        restarts.push_back({now + back, which});
        snprintf(line, sizeof line, "%7.1f s  %s node%d, back after %.1f s", now,
                 sig == SIGKILL ? "SIGKILL" : "SIGTERM", which + 1, back);
      }
      kills.push_back(line);
    }
    snn::SleepRealMs(FLAGS_submit_every_ms);
  }
  for (const Restart& r : restarts) (r.which < 0 ? c.master : c.agents[r.which]).Start();

  // Let everything settle and finish.
  c.WaitFor([&] { return c.NodesUp() == FLAGS_agents; }, 60);
  snn::v1::ListJobsResponse jobs;
  c.WaitFor(
      [&] {
        snn::v1::ListJobsRequest list_req;
        list_req.set_all_tenants(true);
        snn::v1::ListJobsResponse all;
        while (true) {  // every job, page by page
          auto page = c.Call(snn::rpc::kJobList, list_req);
          if (!page.ok()) return false;
          for (auto& j : *page->mutable_jobs()) *all.add_jobs() = std::move(j);
          if (!page->more() || page->next_after_id() <= list_req.after_id()) break;
          list_req.set_after_id(page->next_after_id());
        }
        jobs = all;
        for (const auto& j : jobs.jobs()) {
          if (j.state() == snn::v1::PENDING || j.state() == snn::v1::RUNNING) return false;
        }
        return true;
      },
      180);

  // Check.
  std::vector<std::string> violations;
  std::map<uint64_t, int> seen;
  std::map<snn::v1::JobState, int> by_state;
  for (const auto& j : jobs.jobs()) {
    ++seen[j.id()];
    ++by_state[j.state()];
  }
  for (uint64_t id : acknowledged) {
    if (seen[id] != 1) {
      violations.push_back("acknowledged job " + std::to_string(id) + " appears " +
                           std::to_string(seen[id]) + " times");
    }
  }
  std::istringstream starts(ReadFile(c.dir + "/starts"));
  std::map<std::string, int> launches;
  for (std::string line; std::getline(starts, line);) {
    const std::string key = line.substr(0, line.rfind(' '));  // job task attempt
    if (++launches[key] == 2) violations.push_back("launched twice: job/task/attempt " + key);
  }
  std::istringstream locks(ReadFile(c.dir + "/violations"));
  for (std::string line; std::getline(locks, line);) violations.push_back(line);

  printf(
      "ran %d s with %d agents and %d busy processes beside: %zu jobs acknowledged, %llu "
      "submits refused or unanswered, %zu jobs in the master, %zu task launches\n",
      FLAGS_seconds, FLAGS_agents, FLAGS_stress, acknowledged.size(),
      static_cast<unsigned long long>(submit_errors), seen.size(), launches.size());
  printf("jobs by state:");
  for (const auto& [state, n] : by_state) {
    printf(" %s %d", snn::v1::JobState_Name(state).c_str(), n);
  }
  printf("\nkills (%zu):\n", kills.size());
  for (const auto& k : kills) printf("  %s\n", k.c_str());
  for (const auto& v : violations) printf("VIOLATION %s\n", v.c_str());

  // Stop everything, including any task still running.
  for (auto& a : c.agents) a.Signal(SIGTERM);
  c.master.Signal(SIGTERM);
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string cmdline = ReadFile(entry.path().string() + "/cmdline");
    if (cmdline.find(c.dir) != std::string::npos) kill(std::stoi(entry.path().filename()), SIGKILL);
  }
  if (!FLAGS_keep && violations.empty()) {
    std::filesystem::remove_all(c.dir);
  } else {
    printf("work directory kept: %s\n", c.dir.c_str());
  }
  printf("violations: %zu\n", violations.size());
  return violations.empty() ? 0 : 1;
}
