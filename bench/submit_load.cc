// Load generator: holds N concurrent connections to a real snn-master on loopback, each
// submitting jobs back to back (the next submit goes out when the previous is acknowledged, and
// an acknowledgement means the job is synced to disk). Prints the durable submit rate as its last
// line: `durable submits/s: N`.
//
// By default it starts its own master and one agent (temp dir, ephemeral port) and stops them
// at the end; --master=HOST:PORT targets a running master instead (which must have a node whose
// boards can hold a 1-core job in pool `default`).
#include <fcntl.h>
#include <gflags/gflags.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "common/address.h"
#include "common/connection.h"
#include "common/munge.h"
#include "common/rpc_client.h"
#include "proto/job.pb.h"
#include "proto/node.pb.h"
#include "tests/test_util/auth_kit.h"

DEFINE_string(master, "", "a running master; empty: start a master and an agent for the run");
DEFINE_int32(connections, 32, "concurrent client connections");
DEFINE_double(seconds, 5.0, "measured duration");
DEFINE_double(warmup_seconds, 1.0, "unmeasured warm-up");
DEFINE_string(auth, "munge",
              "munge: TLS and a MUNGE credential per connection, as snnctl does (the master "
              "started here gets its own munged and CA); none: the master's --auth=none");
DEFINE_bool(fresh_credentials, false,
            "with --auth=munge: a new MUNGE credential on every request (each one decoded by "
            "the master's munged)");

extern char** environ;

namespace {

using snn::asio::ip::make_address;

pid_t Start(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

void Stop(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
}

bool WaitFor(const std::function<bool()>& condition, int seconds) {
  for (int i = 0; i < seconds * 100; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

std::unique_ptr<snn::testing::AuthKit> auth;  // --auth=munge

// Every node registered and UP?
bool AgentUp(const snn::HostPort& master) {
  snn::RpcClient client(std::chrono::milliseconds(2000));
  if (auth) auth->SetUp(client);
  if (!client.Connect(master).ok()) return false;
  snn::v1::Credential cred;
  cred.set_user("bench");
  client.set_credential(cred);
  auto pool = client.Call<snn::v1::PoolStatusResponse>("pool.status", snn::v1::PoolStatusRequest());
  return pool.ok() && pool->nodes_size() > 0 && pool->nodes(0).state() == "UP";
}

struct Load {
  snn::asio::io_context io;
  std::vector<std::shared_ptr<snn::Connection>> connections;
  std::map<const snn::Connection*, snn::v1::Credential> credentials;  // one per connection
  snn::v1::SubmitRequest request;
  bool counting = false;
  bool stopping = false;
  uint64_t acknowledged = 0;
  uint64_t errors = 0;

  void Next(const std::shared_ptr<snn::Connection>& c) {
    if (stopping) return;
    snn::v1::Credential& credential = credentials[c.get()];
    if (FLAGS_fresh_credentials && auth) {
      auto minted = snn::MungeEncode(auth->munge_socket());
      if (minted.ok()) credential.set_munge(*minted);
    }
    c->Call("job.submit", request, credential, [this, c](snn::Result<snn::v1::Envelope> reply) {
      auto resp = snn::DecodeResponse<snn::v1::SubmitResponse>(reply);
      if (stopping) return;  // calls cut short by the end of the run
      if (!resp.ok()) {
        if (++errors <= 3) std::cerr << "submit failed: " << resp.status().ToString() << "\n";
        if (!reply.ok()) return;  // connection gone
      } else if (counting) {
        ++acknowledged;
      }
      Next(c);
    });
  }
};

}  // namespace

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  signal(SIGPIPE, SIG_IGN);
  std::string dir;
  pid_t master_pid = -1, agent_pid = -1;
  std::string address = FLAGS_master;
  if (address.empty()) {
    char tmpl[] = "/tmp/snn_bench_XXXXXX";
    dir = mkdtemp(tmpl);
    std::vector<std::string> master_argv = {SNN_MASTER_BIN, "--listen=127.0.0.1:0",
                                            "--data_dir=" + dir + "/master",
                                            "--port_file=" + dir + "/port", "--minloglevel=1"};
    if (FLAGS_auth == "munge") {
      auth = std::make_unique<snn::testing::AuthKit>(dir + "/auth");
      if (!auth->status().ok()) {
        std::cerr << auth->status().ToString() << "\n";
        return 1;
      }
      for (const auto& f : auth->MasterFlags()) master_argv.push_back(f);
    } else {
      master_argv.push_back("--auth=none");
    }
    master_pid = Start(master_argv, dir + "/master.log");
    if (!WaitFor([&] { return std::filesystem::exists(dir + "/port"); }, 20)) {
      std::cerr << "master did not start; see " << dir << "/master.log\n";
      return 1;
    }
    std::ifstream(dir + "/port") >> address;
    address = "127.0.0.1:" + address;
    std::ofstream(dir + "/boards.yaml")
        << "boards:\n  - {type: sim-v1, mesh: 4x4, ksps: 1000, streams: 4}\n";
    std::vector<std::string> agent_argv = {SNN_AGENT_BIN,
                                           "--master=" + address,
                                           "--node_name=bench-node",
                                           "--boards_file=" + dir + "/boards.yaml",
                                           "--data_dir=" + dir + "/agent",
                                           "--stop_tasks_on_exit=true",
                                           "--minloglevel=1"};
    if (auth) {
      for (const auto& f : auth->AgentFlags("bench-node")) agent_argv.push_back(f);
    } else {
      agent_argv.push_back("--tls=false");
    }
    agent_pid = Start(agent_argv, dir + "/agent.log");
  }
  auto master = snn::ParseHostPort(address);
  if (!master.ok() || !WaitFor([&] { return AgentUp(*master); }, 20)) {
    std::cerr << "no master with a registered node at " << address << "\n";
    Stop(agent_pid);
    Stop(master_pid);
    return 1;
  }

  Load load;
  std::shared_ptr<snn::ssl::context> tls;
  if (auth) {
    auto made = snn::MakeClientTls({auth->ca_file(), "", ""});
    if (!made.ok()) {
      std::cerr << made.status().ToString() << "\n";
      return 1;
    }
    tls = *made;
  }
  auto* spec = load.request.mutable_spec();
  spec->set_name("load");
  spec->set_time_limit_s(600);
  spec->mutable_task()->set_command("/bin/sleep");
  spec->mutable_task()->add_args("600");
  // The whole board: the first job runs, every later one waits behind it (the scheduler is not
  // what this measures, and the agent is not asked to start thousands of processes).
  auto* r = spec->mutable_task()->mutable_resources();
  r->set_cores(16);
  r->set_ksps(1000);
  r->set_streams(4);
  for (int i = 0; i < FLAGS_connections; ++i) {
    snn::tcp::socket socket(load.io);
    boost::system::error_code ec;
    socket.connect(snn::tcp::endpoint(make_address(master->host), master->port), ec);
    if (ec) {
      std::cerr << "connect: " << ec.message() << "\n";
      return 1;
    }
    std::shared_ptr<snn::Connection> c;
    snn::v1::Credential credential;
    if (tls) {
      auto stream = std::make_unique<snn::TlsStream>(std::move(socket), *tls);
      stream->handshake(snn::ssl::stream_base::client, ec);
      if (ec) {
        std::cerr << "TLS handshake: " << ec.message() << "\n";
        return 1;
      }
      c = snn::Connection::Create(std::move(stream), 4 << 20, nullptr, nullptr);
      auto minted = snn::MungeEncode(auth->munge_socket());
      if (!minted.ok()) {
        std::cerr << minted.status().ToString() << "\n";
        return 1;
      }
      credential.set_munge(*minted);
    } else {
      c = snn::Connection::Create(std::move(socket), 4 << 20, nullptr, nullptr);
      credential.set_user("bench");
    }
    c->Start();
    load.credentials[c.get()] = credential;
    load.connections.push_back(c);
    load.Next(c);
  }
  snn::asio::steady_timer timer(load.io);
  auto start = std::chrono::steady_clock::now();
  timer.expires_after(std::chrono::milliseconds(static_cast<int64_t>(FLAGS_warmup_seconds * 1000)));
  timer.async_wait([&](const boost::system::error_code&) {
    load.counting = true;
    start = std::chrono::steady_clock::now();
    timer.expires_after(std::chrono::milliseconds(static_cast<int64_t>(FLAGS_seconds * 1000)));
    timer.async_wait([&](const boost::system::error_code&) {
      load.counting = false;
      load.stopping = true;
      for (auto& c : load.connections) c->Close(snn::Unavailable("done"));
    });
  });
  load.io.run();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Stop(agent_pid);
  Stop(master_pid);
  auth.reset();
  if (!dir.empty()) std::filesystem::remove_all(dir);
  std::printf(
      "auth: %s%s\n", FLAGS_auth.c_str(),
      FLAGS_fresh_credentials && FLAGS_auth == "munge" ? " (a new credential per request)" : "");
  std::printf("connections: %d, acknowledged submits: %llu in %.2f s, errors: %llu\n",
              FLAGS_connections, static_cast<unsigned long long>(load.acknowledged), elapsed,
              static_cast<unsigned long long>(load.errors));
  std::printf("durable submits/s: %.0f\n", load.acknowledged / elapsed);
  return load.errors > 0 ? 1 : 0;
}
