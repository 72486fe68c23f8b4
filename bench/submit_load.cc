// Load generator: holds N concurrent connections to a real snn-master on loopback, each
// submitting jobs back to back (the next submit goes out when the previous is acknowledged, and
// an acknowledgement means the job is synced to disk). Prints the durable submit rate as its last
// line: `durable submits/s: N`, after the rate of each consecutive window (--window_seconds):
// a rate that holds is the same in every window, whatever the run's length.
//   --preload=N submits N jobs first (unmeasured), so that the measured submits join a queue
//   that deep: every job waits behind the first, which holds the only board.
//
// --ha_etcd_members=3 measures the master's HA mode on a three-member etcd cluster.
// By default it starts its own master and one agent (temp dir, ephemeral port) and stops them
// at the end; --master=HOST:PORT targets a running master instead (which must have a node whose
// boards can hold a 1-core job in pool `default`).
#include <fcntl.h>
#include <gflags/gflags.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <thread>

#include "bench/bench_cluster.h"
#include "bench/process_cpu.h"
#include "common/base/clock.h"
#include "common/daemon/program_flags.h"
#include "common/identity/munge.h"
#include "common/rpc/address.h"
#include "common/rpc/clock_timer.h"
#include "common/rpc/connection.h"
#include "common/rpc/rpc_client.h"
#include "proto/job.pb.h"
#include "proto/node.pb.h"
#include "tests/test_util/auth_kit.h"

DEFINE_string(master, "",
              "a running master (with --auth=none); empty: start a master and an agent for the "
              "run");
DEFINE_string(master_flags, "",
              "flags for the master started here, comma-separated (e.g. "
              "--schedule_max_busy=0.1)");
DEFINE_int32(connections, 32, "concurrent client connections");
DEFINE_int32(ha_etcd_members, 0,
             "0: a single master; N: start an etcd cluster of N members and the master in its "
             "HA mode on it (--ha_etcd), so every submit is in etcd before it is acknowledged");
DEFINE_double(seconds, 6.0, "measured duration");
DEFINE_double(window_seconds, 2.0, "print the rate of each window this long");
DEFINE_uint64(preload, 0, "jobs submitted (and acknowledged) before the warm-up, not measured");
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

// --auth=munge: TLS to the master and a MUNGE credential per connection.
snn::testing::AuthKit* auth = nullptr;

struct Load {
  snn::asio::io_context io;
  std::vector<std::shared_ptr<snn::Connection>> connections;
  std::map<const snn::Connection*, snn::v1::Credential> credentials;  // one per connection
  snn::v1::SubmitRequest request;
  bool counting = false;
  bool stopping = false;
  uint64_t acknowledged = 0;  // while counting
  uint64_t all_acknowledged = 0;
  uint64_t errors = 0;
  std::function<void()> on_preloaded;  // once all_acknowledged reaches --preload

  void Next(const std::shared_ptr<snn::Connection>& c) {
    if (stopping) return;
    snn::v1::Credential& credential = credentials[c.get()];
    if (FLAGS_fresh_credentials && auth) {
      auto minted = snn::MungeEncode(auth->munge_socket());
      if (minted.ok()) credential.set_munge(*minted);
    }
    c->Call(snn::rpc::kJobSubmit, request, credential,
            [this, c](snn::Result<snn::v1::Envelope> reply) {
              auto resp = snn::DecodeResponse<snn::v1::SubmitResponse>(reply);
              if (stopping) return;  // calls cut short by the end of the run
              if (!resp.ok()) {
                if (++errors <= 3)
                  std::cerr << "submit failed: " << resp.status().ToString() << "\n";
                if (!reply.ok()) return;  // connection gone
              } else {
                if (counting) ++acknowledged;
                if (++all_acknowledged == FLAGS_preload && on_preloaded) on_preloaded();
              }
              Next(c);
            });
  }
};

// What the processes of the run have used at one moment: CPU seconds each, and etcd's revision
// (one more per write transaction), for the figures per submit and per etcd round.
struct Usage {
  double master = 0, etcd = 0, load = 0;
  int64_t revision = -1;
};

Usage Measure(const snn::bench::BenchCluster& cluster) {
  Usage usage;
  if (cluster.master_pid() > 0) usage.master = snn::bench::CpuSeconds(cluster.master_pid());
  usage.load = snn::bench::CpuSeconds(getpid());
  if (const auto* etcd = cluster.etcd()) {
    usage.revision = etcd->Revision();
    for (pid_t pid : etcd->pids()) usage.etcd += snn::bench::CpuSeconds(pid);
  }
  return usage;
}

// CPU per acknowledged submit of each side, and with etcd its transactions in the window.
void PrintUsage(const Usage& from, const Usage& to, uint64_t acknowledged, bool own_master) {
  if (acknowledged == 0) return;
  auto us = [&](double from_s, double to_s) { return (to_s - from_s) / acknowledged * 1e6; };
  std::printf("CPU per submit: ");
  if (own_master) std::printf("master %.0f us, ", us(from.master, to.master));
  if (from.revision >= 0) std::printf("etcd %.0f us, ", us(from.etcd, to.etcd));
  std::printf("this load generator %.0f us\n", us(from.load, to.load));
  if (from.revision < 0 || to.revision <= from.revision) return;
  const auto rounds = static_cast<double>(to.revision - from.revision);
  std::printf(
      "etcd write transactions: %.0f (%.1f submits each), etcd CPU per transaction: %.2f ms\n",
      rounds, acknowledged / rounds, (to.etcd - from.etcd) / rounds * 1e3);
}

std::string ThisUser() {
  const passwd* pw = getpwuid(geteuid());
  return pw != nullptr ? pw->pw_name : "root";
}

}  // namespace

// The job every connection submits: the whole board, so the first job runs and every later one
// waits behind it (the scheduler is not what this measures, and the agent is not asked to start
// thousands of processes).
void SetUpJob(Load& load) {
  auto* spec = load.request.mutable_spec();
  spec->set_name("load");
  spec->set_time_limit_s(600);
  spec->mutable_task()->set_command("/bin/sleep");
  spec->mutable_task()->add_args("600");
  auto* r = spec->mutable_task()->mutable_resources();
  r->set_cores(16);
  r->set_ksps(1000);
  r->set_streams(4);
}

// --connections connections to the master, each submitting as soon as it is open.
snn::Status Connect(Load& load, const snn::HostPort& master,
                    const std::shared_ptr<snn::ssl::context>& tls) {
  for (int i = 0; i < FLAGS_connections; ++i) {
    snn::tcp::socket socket(load.io);
    boost::system::error_code ec;
    socket.connect(snn::tcp::endpoint(make_address(master.host), master.port), ec);
    if (ec) {
      return snn::Unavailable("connect: " + ec.message());
    }
    std::shared_ptr<snn::Connection> c;
    snn::v1::Credential credential;
    if (tls) {
      auto stream = std::make_unique<snn::TlsStream>(std::move(socket), *tls);
      stream->handshake(snn::ssl::stream_base::client, ec);
      if (ec) {
        return snn::Unavailable("TLS handshake: " + ec.message());
      }
      c = snn::Connection::Create(std::move(stream), 4 << 20, nullptr, nullptr);
      auto minted = snn::MungeEncode(auth->munge_socket());
      if (!minted.ok()) {
        return minted.status();
      }
      credential.set_munge(*minted);
    } else {
      c = snn::Connection::Create(std::move(socket), 4 << 20, nullptr, nullptr);
      credential.set_user(ThisUser());  // a real user, so the one job that runs can start
    }
    c->Start();
    load.credentials[c.get()] = credential;
    load.connections.push_back(c);
    load.Next(c);
  }
  return snn::Status::Ok();
}

// What was measured, with the master's and the agent's CPU and memory over the counted time.
void Report(const Load& load, const std::vector<double>& windows, double elapsed,
            const Usage& measured_from, const Usage& measured_to) {
  std::printf(
      "auth: %s%s\n", FLAGS_auth.c_str(),
      FLAGS_fresh_credentials && FLAGS_auth == "munge" ? " (a new credential per request)" : "");
  std::printf("connections: %d, acknowledged submits: %llu in %.2f s, errors: %llu\n",
              FLAGS_connections, static_cast<unsigned long long>(load.acknowledged), elapsed,
              static_cast<unsigned long long>(load.errors));
  if (!windows.empty()) {
    std::printf("slowest window: %.0f submits/s\n",
                *std::min_element(windows.begin(), windows.end()));
  }
  PrintUsage(measured_from, measured_to, load.acknowledged, FLAGS_master.empty());
  std::printf("durable submits/s: %.0f\n", load.acknowledged / elapsed);
}

int main(int argc, char** argv) {
  snn::ParseProgramFlags(&argc, &argv, "submit_load [FLAGS]");
  signal(SIGPIPE, SIG_IGN);
  snn::bench::BenchCluster cluster;
  if (FLAGS_master.empty()) {
    std::vector<std::string> master_flags;
    for (size_t at = 0; at < FLAGS_master_flags.size();) {
      size_t end = FLAGS_master_flags.find(',', at);
      if (end == std::string::npos) end = FLAGS_master_flags.size();
      if (end > at) master_flags.push_back(FLAGS_master_flags.substr(at, end - at));
      at = end + 1;
    }
    if (snn::Status s = cluster.Start(FLAGS_auth, master_flags, FLAGS_ha_etcd_members); !s.ok()) {
      std::cerr << s.ToString() << "\n";
      return 1;
    }
    auth = cluster.auth();
  } else if (FLAGS_auth != "none") {
    std::cerr << "--master needs --auth=none (a running master's CA and munged are not known)\n";
    return 2;
  }
  auto master = FLAGS_master.empty() ? snn::Result<snn::HostPort>(cluster.master())
                                     : snn::ParseHostPort(FLAGS_master);
  if (!master.ok()) {
    std::cerr << "--master: " << master.status().message() << "\n";
    return 2;
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
  SetUpJob(load);
  if (snn::Status s = Connect(load, *master, tls); !s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  auto ms = [](double seconds) {
    return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  };
  const snn::SystemClock real_clock;  // a load of real time
  snn::ClockTimer timer(load.io, real_clock);
  auto start = snn::MonotonicNow();
  auto window_start = start;
  uint64_t window_acknowledged = 0;
  std::vector<double> windows;
  std::function<void()> next_window = [&] {
    const auto now = snn::MonotonicNow();
    const double seconds = std::chrono::duration<double>(now - window_start).count();
    const double rate = (load.acknowledged - window_acknowledged) / seconds;
    windows.push_back(rate);
    std::printf("window %zu: %.0f submits/s\n", windows.size(), rate);
    std::fflush(stdout);
    window_start = now;
    window_acknowledged = load.acknowledged;
    if (now - start >= ms(FLAGS_seconds) - std::chrono::milliseconds(1)) {
      load.counting = false;
      load.stopping = true;
      for (auto& c : load.connections) c->Close(snn::Unavailable("done"));
      return;
    }
    timer.WaitMs(ms(std::min(FLAGS_window_seconds,
                             FLAGS_seconds - std::chrono::duration<double>(now - start).count()))
                     .count(),
                 [&](bool) { next_window(); });
  };
  Usage measured_from;
  auto warm_up = [&] {
    timer.WaitMs(ms(FLAGS_warmup_seconds).count(), [&](bool) {
      measured_from = Measure(cluster);  // before the clock starts: it blocks this loop
      load.counting = true;
      start = window_start = snn::MonotonicNow();
      timer.WaitMs(ms(std::min(FLAGS_window_seconds, FLAGS_seconds)).count(),
                   [&](bool) { next_window(); });
    });
  };
  const auto preload_start = snn::MonotonicNow();
  if (FLAGS_preload == 0) {
    warm_up();
  } else {
    load.on_preloaded = [&] {
      std::printf("preloaded %llu jobs in %.1f s\n", static_cast<unsigned long long>(FLAGS_preload),
                  std::chrono::duration<double>(snn::MonotonicNow() - preload_start).count());
      std::fflush(stdout);
      warm_up();
    };
  }
  load.io.run();
  const double elapsed = std::chrono::duration<double>(snn::MonotonicNow() - start).count();
  const Usage measured_to = Measure(cluster);
  Report(load, windows, elapsed, measured_from, measured_to);
  return load.errors > 0 ? 1 : 0;
}
