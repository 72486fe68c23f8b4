// Thousands of agents against one real master, in one process: each simulated node holds its
// own TCP session (plain TCP: the master runs --auth=none), registers with its boards and the
// tasks it runs, sends heartbeats at the interval the master asks for, answers launches and
// kills (tasks are simulated, not forked: a launched task runs until it is killed), and
// reconnects and registers again when the master goes away, as snn-agent does.
//
// It measures, on a master it starts (temp dir, ephemeral port):
//   1. the first registration of --nodes nodes (time until the master has answered them all);
//   2. jobs started per second end to end: --jobs one-task jobs submitted over 16 client
//      connections, from the first submit until the swarm has answered the last launch;
//   3. the master's CPU at steady heartbeats, over --steady_seconds, with those jobs running;
//   4. the registration storm after a master restart: from spawning the new master on the same
//      store until every node has registered again and reconciled its running tasks.
// Its last line gives the three figures of issue 14.
#include <gflags/gflags.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "bench/process_cpu.h"
#include "bench/sim_board.h"
#include "common/base/clock.h"
#include "common/daemon/program_flags.h"
#include "common/rpc/clock_timer.h"
#include "common/rpc/connection.h"
#include "common/rpc/rpc_client.h"
#include "common/rpc/rpc_router.h"
#include "proto/job.pb.h"
#include "proto/node.pb.h"
#include "snn_paths.h"
#include "tests/test_util/process.h"

DEFINE_uint32(nodes, 5000, "simulated nodes");
DEFINE_uint32(boards, 4, "boards per node (16x16 cores each)");
DEFINE_uint32(jobs, 20000, "jobs submitted for the start rate (one 4-core task each)");
DEFINE_double(steady_seconds, 10, "how long the master's CPU is sampled at steady heartbeats");
DEFINE_int64(reconnect_ms, 1000, "a node's wait before it connects again (snn-agent: 1000)");
DEFINE_string(master_flags, "", "more flags for the master, comma-separated");

namespace {

namespace asio = boost::asio;
using snn::tcp;
namespace fs = std::filesystem;

double SecondsSince(snn::MonotonicTime t) {
  return std::chrono::duration<double>(snn::MonotonicNow() - t).count();
}

int64_t WallMs() { return snn::SystemClock().NowMs(); }

// Counters the main thread reads while the swarm's io thread runs.
struct SwarmCounters {
  std::atomic<uint32_t> registered{0};  // nodes whose registration on their current session
                                        // the master answered
  std::atomic<uint64_t> launches{0};    // launches answered, in all
  std::atomic<uint64_t> kills{0};
  std::atomic<uint64_t> heartbeats{0};
  std::atomic<uint64_t> refused{0};  // registrations or heartbeats the master refused
};

class SimNode {
 public:
  SimNode(asio::io_context& io, snn::HostPort* master, uint32_t index, SwarmCounters& counters,
          std::mt19937& rng)
      : io_(io), master_(master), timer_(io, real_clock_), counters_(counters) {
    name_ = "sim-" + std::to_string(index);
    record_.set_name(name_);
    record_.add_pools("default");
    for (uint32_t b = 0; b < FLAGS_boards; ++b) {
      auto* board = snn::bench::AddSimBoard(record_, b);
      board->set_measured_ksps(3900 + rng() % 200);
      board->mutable_io_port();
    }
    credential_.set_user("snn-agent");
    credential_.set_node(name_);
    router_.Add<snn::v1::LaunchRequest, snn::v1::LaunchResponse>(
        snn::rpc::kAgentLaunch,
        [this](const snn::CallContext&, snn::v1::LaunchRequest req,
               snn::Responder<snn::v1::LaunchResponse> r) { OnLaunch(req, r); });
    router_.Add<snn::v1::KillRequest, snn::v1::KillResponse>(
        snn::rpc::kAgentKill, [this](const snn::CallContext&, snn::v1::KillRequest req,
                                     snn::Responder<snn::v1::KillResponse> r) { OnKill(req, r); });
    phase_ms_ = rng() % 1000;
  }

  void Start() {
    Wait(phase_ms_, [this] { Connect(); });
  }
  void Stop() {
    stopped_ = true;
    timer_.Cancel();
    if (session_) session_->Close(snn::Unavailable("swarm stopping"));
  }

 private:
  using TaskKey = std::tuple<uint64_t, uint32_t, uint32_t>;

  void Wait(int64_t ms, std::function<void()> then) {
    timer_.WaitMs(ms, [this, then = std::move(then)](bool expired) {
      if (expired && !stopped_) then();
    });
  }

  void Connect() {
    auto socket = std::make_shared<tcp::socket>(io_);
    socket->async_connect(tcp::endpoint(asio::ip::make_address(master_->host), master_->port),
                          [this, socket](const boost::system::error_code& ec) {
                            if (stopped_) return;
                            if (ec) return Wait(FLAGS_reconnect_ms, [this] { Connect(); });
                            OnConnected(std::move(*socket));
                          });
  }

  void OnConnected(tcp::socket socket) {
    session_ = snn::Connection::Create(std::move(socket), 64 << 20, nullptr, nullptr);
    session_->set_request_handler(
        [this](const std::shared_ptr<snn::Connection>& c, snn::v1::Envelope e) {
          snn::Identity master;
          master.kind = snn::Identity::Kind::kMaster;
          router_.Dispatch(c, std::move(e), std::move(master));
        });
    session_->set_close_handler(
        [this](const std::shared_ptr<snn::Connection>&, const snn::Status&) { OnClosed(); });
    session_->Start();
    snn::v1::RegisterRequest req;
    *req.mutable_node() = record_;
    for (const auto& [key, status] : tasks_) *req.add_tasks() = status;
    auto session = session_;
    session_->Call(snn::rpc::kNodeRegister, req, credential_,
                   [this, session](snn::Result<snn::v1::Envelope> reply) {
                     auto resp = snn::DecodeResponse<snn::v1::RegisterResponse>(reply);
                     if (session != session_) return;
                     if (!resp.ok()) {
                       ++counters_.refused;
                       return session_->Close(resp.status());
                     }
                     registered_ = true;
                     ++counters_.registered;
                     interval_ms_ = std::max<int64_t>(50, resp->heartbeat_interval_ms());
                     Wait(interval_ms_, [this] { Heartbeat(); });
                   });
  }

  void Heartbeat() {
    if (!session_ || !registered_) return;
    snn::v1::HeartbeatRequest req;
    req.set_node(name_);
    auto session = session_;
    session_->Call(snn::rpc::kNodeHeartbeat, req, credential_,
                   [this, session](snn::Result<snn::v1::Envelope> reply) {
                     auto resp = snn::DecodeResponse<snn::v1::HeartbeatResponse>(reply);
                     if (resp.ok()) ++counters_.heartbeats;
                     if (!resp.ok() && reply.ok()) {
                       ++counters_.refused;
                       if (session == session_) session_->Close(resp.status());
                     }
                   });
    Wait(interval_ms_, [this] { Heartbeat(); });
  }

  void OnClosed() {
    if (registered_) --counters_.registered;
    registered_ = false;
    session_.reset();
    if (!stopped_) Wait(FLAGS_reconnect_ms, [this] { Connect(); });
  }

  void OnLaunch(const snn::v1::LaunchRequest& req, snn::Responder<snn::v1::LaunchResponse> r) {
    snn::v1::TaskStatus status;
    status.set_job_id(req.job_id());
    status.set_index(req.index());
    status.set_attempt(req.attempt());
    status.set_state(snn::v1::TASK_RUNNING);
    status.set_board(req.board());
    *status.mutable_mapping()->mutable_rect() = req.hint();
    status.set_pid(100000 + static_cast<uint32_t>(tasks_.size()));
    status.set_start_ms(WallMs());
    tasks_[TaskKey{req.job_id(), req.index(), req.attempt()}] = status;
    snn::v1::LaunchResponse resp;
    *resp.mutable_status() = status;
    r.Ok(resp);
    ++counters_.launches;
  }

  void OnKill(const snn::v1::KillRequest& req, snn::Responder<snn::v1::KillResponse> r) {
    r.Ok(snn::v1::KillResponse());
    ++counters_.kills;
    auto it = tasks_.find(TaskKey{req.job_id(), req.index(), req.attempt()});
    if (it == tasks_.end() || !session_) return;
    snn::v1::TaskStatusReport report;
    snn::v1::TaskStatus* ended = report.add_tasks();
    *ended = it->second;
    ended->set_state(snn::v1::TASK_KILLED);
    ended->set_end_ms(WallMs());
    tasks_.erase(it);
    session_->Call(snn::rpc::kNodeTaskStatus, report, credential_,
                   [](snn::Result<snn::v1::Envelope>) {});
  }

  asio::io_context& io_;
  snn::HostPort* master_;
  const snn::SystemClock real_clock_;  // a swarm of real agents: real time
  snn::ClockTimer timer_;
  SwarmCounters& counters_;
  std::string name_;
  snn::v1::NodeRecord record_;
  snn::v1::Credential credential_;
  snn::MethodRouter router_;
  std::shared_ptr<snn::Connection> session_;
  std::map<TaskKey, snn::v1::TaskStatus> tasks_;
  bool registered_ = false;
  bool stopped_ = false;
  int64_t interval_ms_ = 1000;
  int64_t phase_ms_ = 0;
};

struct Master {
  pid_t pid = -1;
  snn::HostPort address{"127.0.0.1", 0};
};

snn::Status StartMaster(const std::string& dir, Master& master) {
  fs::remove(dir + "/port");
  std::vector<std::string> argv = {SNN_MASTER_BIN,
                                   "--auth=none",
                                   "--listen=127.0.0.1:0",
                                   "--data_dir=" + dir + "/master",
                                   "--port_file=" + dir + "/port",
                                   "--max_connections=20000",
                                   "--max_anonymous_connections_per_peer=20000",
                                   "--minloglevel=1",
                                   "--metrics_listen=",
                                   "--http_listen="};
  std::string extra = FLAGS_master_flags;
  for (size_t start = 0; start < extra.size();) {
    size_t comma = extra.find(',', start);
    if (comma == std::string::npos) comma = extra.size();
    if (comma > start) argv.push_back(extra.substr(start, comma - start));
    start = comma + 1;
  }
  master.pid = snn::testing::SpawnLogged(argv, dir + "/master.log", dir + "/master.log");
  const auto start = snn::MonotonicNow();
  while (SecondsSince(start) < 60) {
    int port = 0;
    if (std::ifstream in(dir + "/port"); in >> port && port > 0) {
      master.address.port = static_cast<uint16_t>(port);
      return snn::Status::Ok();
    }
    snn::SleepRealMs(2);
  }
  return snn::Unavailable("the master did not start; see " + dir + "/master.log");
}

void StopMaster(Master& master) {
  if (master.pid <= 0) return;
  kill(master.pid, SIGTERM);
  waitpid(master.pid, nullptr, 0);
  master.pid = -1;
}

bool WaitFor(const std::function<bool()>& done, double seconds) {
  const auto start = snn::MonotonicNow();
  while (!done()) {
    if (SecondsSince(start) > seconds) return false;
    snn::SleepRealMs(1);
  }
  return true;
}

// Submits `count` jobs over `connections` clients, each keeping one submit in flight.
snn::Status SubmitJobs(const snn::HostPort& master, uint32_t count, int connections) {
  std::atomic<uint32_t> next{0};
  std::atomic<bool> failed{false};
  std::string error;
  std::mutex mu;
  std::vector<std::thread> clients;
  for (int c = 0; c < connections; ++c) {
    clients.emplace_back([&] {
      snn::RpcClient client(std::chrono::milliseconds(30000));
      snn::v1::Credential cred;
      cred.set_user("swarm");
      client.set_credential(cred);
      if (auto s = client.Connect(master); !s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        error = s.ToString();
        failed = true;
        return;
      }
      snn::v1::SubmitRequest req;
      auto* spec = req.mutable_spec();
      spec->set_name("swarm");
      spec->set_min_replicas(1);
      spec->set_time_limit_s(86400);
      spec->mutable_task()->set_command("/bin/true");
      auto* r = spec->mutable_task()->mutable_resources();
      r->set_cores(4);
      r->set_ksps(10);
      r->set_streams(1);
      while (!failed && next.fetch_add(1) < count) {
        auto resp = client.Call(snn::rpc::kJobSubmit, req);
        if (!resp.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          error = resp.status().ToString();
          failed = true;
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  return failed ? snn::Internal("submitting: " + error) : snn::Status::Ok();
}

}  // namespace

// The master's own view after the restart: every node UP, every job still running.
snn::Status CheckAfterRestart(const snn::HostPort& master, const SwarmCounters& counters,
                              double storm_s, double cpu, double start_rate) {
  snn::RpcClient client(std::chrono::milliseconds(30000));
  snn::v1::Credential cred;
  cred.set_user("swarm");
  client.set_credential(cred);
  if (auto s = client.Connect(master); !s.ok()) {
    return s;
  }
  auto pool = client.Call(snn::rpc::kPoolStatus, snn::v1::PoolStatusRequest());
  if (!pool.ok()) {
    return pool.status();
  }
  uint32_t up = 0;
  for (const auto& n : pool->nodes()) up += n.state() == "UP" ? 1 : 0;
  uint64_t running = 0;
  for (const auto& c : pool->job_counts()) {
    if (c.state() == snn::v1::RUNNING) running = c.count();
  }
  std::printf(
      "restart: all %u nodes registered again %.2f s after the master was spawned; "
      "the master says %u UP, %llu jobs running, %llu kills sent\n",
      FLAGS_nodes, storm_s, up, static_cast<unsigned long long>(running),
      static_cast<unsigned long long>(counters.kills.load()));
  if (up != FLAGS_nodes || running != FLAGS_jobs) {
    return snn::Internal("the master lost nodes or jobs across the restart");
  }
  std::printf(
      "agent_swarm %u nodes: all UP %.2f s after a restart; master CPU %.1f%% at "
      "steady heartbeats; %.0f jobs started/s\n",
      FLAGS_nodes, storm_s, cpu, start_rate);
  return snn::Status::Ok();
}

// As many open files as allowed: one connection per node, and room besides.
bool RaiseFileLimit() {
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < FLAGS_nodes + 256) {
    std::cerr << "agent_swarm: the file descriptor limit (" << files.rlim_cur << ") is too low for "
              << FLAGS_nodes << " nodes\n";
    return false;
  }
  return true;
}

// 3. Master CPU at steady heartbeats, in percent of one core.
double SteadyCpu(pid_t master_pid, const SwarmCounters& counters) {
  snn::SleepRealMs((2) * 1000);  // let the last passes and acks end
  const uint64_t beats_before = counters.heartbeats;
  const double cpu_before = snn::bench::CpuSeconds(master_pid);
  const auto start = snn::MonotonicNow();
  snn::SleepRealMs(static_cast<int64_t>(FLAGS_steady_seconds * 1000));
  const double wall = SecondsSince(start);
  const double cpu = (snn::bench::CpuSeconds(master_pid) - cpu_before) / wall * 100;
  std::printf("steady heartbeats: %.0f/s, master CPU %.1f%% of one core\n",
              (counters.heartbeats - beats_before) / wall, cpu);
  return cpu;
}

int main(int argc, char** argv) {
  snn::ParseProgramFlags(&argc, &argv,
                         "agent_swarm [--nodes=N] [--boards=N] [--jobs=N] [--steady_seconds=S]");
  if (!RaiseFileLimit()) return 2;
  char tmpl[] = "/tmp/snn_swarm_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  Master master;
  if (auto s = StartMaster(dir, master); !s.ok()) {
    std::cerr << "agent_swarm: " << s.ToString() << "\n";
    return 1;
  }
  snn::HostPort address = master.address;  // the nodes read it when they (re)connect

  asio::io_context io;
  auto guard = asio::make_work_guard(io);
  SwarmCounters counters;
  std::mt19937 rng(1);
  std::vector<std::unique_ptr<SimNode>> nodes;
  for (uint32_t i = 0; i < FLAGS_nodes; ++i) {
    nodes.push_back(std::make_unique<SimNode>(io, &address, i, counters, rng));
  }
  std::thread swarm([&] { io.run(); });
  auto on_swarm = [&](std::function<void()> fn) { asio::post(io, std::move(fn)); };
  int exit_code = 0;
  auto fail = [&](const std::string& why) {
    std::cerr << "agent_swarm: " << why << " (master log: " << dir << "/master.log)\n";
    exit_code = 1;
  };

  do {
    // 1. First registration.
    auto start = snn::MonotonicNow();
    on_swarm([&] {
      for (auto& n : nodes) n->Start();
    });
    if (!WaitFor([&] { return counters.registered == FLAGS_nodes; }, 120)) {
      fail("only " + std::to_string(counters.registered) + " nodes registered");
      break;
    }
    std::printf("first registration of %u nodes: %.2f s (their first connects spread over 1 s)\n",
                FLAGS_nodes, SecondsSince(start));

    // 2. Jobs started per second, end to end.
    start = snn::MonotonicNow();
    const uint64_t launches_before = counters.launches;
    if (auto s = SubmitJobs(master.address, FLAGS_jobs, 16); !s.ok()) {
      fail(s.ToString());
      break;
    }
    const double submitted_s = SecondsSince(start);
    if (!WaitFor([&] { return counters.launches - launches_before >= FLAGS_jobs; }, 300)) {
      fail("only " + std::to_string(counters.launches - launches_before) + " of " +
           std::to_string(FLAGS_jobs) + " jobs were launched");
      break;
    }
    const double started_s = SecondsSince(start);
    const double start_rate = FLAGS_jobs / started_s;
    std::printf("%u jobs: submitted in %.2f s, all launched after %.2f s: %.0f jobs started/s\n",
                FLAGS_jobs, submitted_s, started_s, start_rate);

    // 3. Master CPU at steady heartbeats.
    const double cpu = SteadyCpu(master.pid, counters);

    // 4. Registration storm after a restart.
    StopMaster(master);
    if (!WaitFor([&] { return counters.registered == 0; }, 30)) {
      fail("nodes still registered after the master stopped");
      break;
    }
    start = snn::MonotonicNow();
    if (auto s = StartMaster(dir, master); !s.ok()) {
      fail(s.ToString());
      break;
    }
    on_swarm([&, port = master.address.port] { address.port = port; });
    if (!WaitFor([&] { return counters.registered == FLAGS_nodes; }, 120)) {
      fail("after the restart only " + std::to_string(counters.registered) +
           " nodes registered again");
      break;
    }
    const double storm_s = SecondsSince(start);
    if (auto s = CheckAfterRestart(master.address, counters, storm_s, cpu, start_rate); !s.ok()) {
      fail(s.ToString());
      break;
    }
  } while (false);

  on_swarm([&] {
    for (auto& n : nodes) n->Stop();
    guard.reset();
  });
  swarm.join();
  StopMaster(master);
  if (exit_code == 0) fs::remove_all(dir);
  return exit_code;
}
