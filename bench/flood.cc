// Flood run, by hand: a master (TLS and MUNGE, its own munged and CA) and an agent, then, from
// many loopback addresses at once: thousands of connections (idle, or in a frame that declares
// 4 MiB and stalls), and connections that ask for big job lists without reading the answers.
// Throughout, `snnctl jobs --all-tenants` runs every 250 ms from its own address. Prints the
// master's peak RSS and snnctl's slowest answer; the last line is
// `max snnctl jobs ms: N, max master RSS MB: M`.
#include <gflags/gflags.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "bench/bench_cluster.h"
#include "common/base/clock.h"
#include "common/daemon/program_flags.h"
#include "common/identity/munge.h"
#include "common/rpc/frame.h"
#include "common/rpc/tls.h"
#include "proto/job.pb.h"
#include "snn_paths.h"
#include "tests/test_util/process.h"
#include "tests/test_util/sockets.h"

DEFINE_int32(addresses, 24, "loopback addresses the flood comes from (127.0.1.1 on)");
DEFINE_int32(per_address, 256, "connections each address opens, half idle, half stalled frames");
DEFINE_int32(unread, 8, "connections that ask for job lists and never read the answers");
DEFINE_int32(seconds, 20, "how long the flood is held");

namespace {

std::string Address(int block, int i) {
  return "127.0." + std::to_string(block) + "." + std::to_string(1 + i % 250);
}

}  // namespace

// Twenty jobs of about 400 kB each: a page of every job is about a megabyte.
bool SubmitBulkyJobs(snn::bench::BenchCluster& cluster, const snn::HostPort& master) {
  snn::RpcClient client(std::chrono::milliseconds(5000));
  cluster.SetUp(client);
  if (!client.Connect(master).ok()) return false;
  snn::v1::Credential cred;
  cred.set_tenant("bulky");
  client.set_credential(cred);
  snn::v1::SubmitRequest req;
  auto* spec = req.mutable_spec();
  spec->set_name("bulky");
  spec->set_time_limit_s(3600);
  spec->mutable_task()->set_command("/bin/sleep");
  spec->mutable_task()->add_args("3600");
  auto* r = spec->mutable_task()->mutable_resources();
  r->set_cores(16);
  r->set_ksps(1000);
  r->set_streams(4);
  for (int k = 0; k < 100; ++k) {
    (*spec->mutable_task()->mutable_env())["BLOB" + std::to_string(k)] = std::string(4000, 'x');
  }
  for (int i = 0; i < 20; ++i) {
    auto resp = client.Call(snn::rpc::kJobSubmit, req);
    if (!resp.ok()) {
      std::cerr << "submit: " << resp.status().ToString() << "\n";
      return false;
    }
  }
  return true;
}

// --unread connections, each sending 300 job.list requests it never reads the answers of: how
// many requests went out.
int SendUnread(snn::asio::io_context& io, const snn::HostPort& master, snn::ssl::context& tls,
               snn::testing::AuthKit* auth, std::vector<std::unique_ptr<snn::TlsStream>>& unread) {
  int unread_requests = 0;
  for (int c = 0; c < FLAGS_unread; ++c) {
    auto s = snn::testing::ConnectFrom(io, Address(2, c), master.port, 2);
    if (!s) continue;
    auto stream = std::make_unique<snn::TlsStream>(std::move(*s), tls);
    boost::system::error_code ec;
    stream->handshake(snn::ssl::stream_base::client, ec);
    auto credential = snn::MungeEncode(auth->munge_socket());
    if (ec || !credential.ok()) continue;
    for (int i = 0; i < 300 && !ec; ++i) {
      snn::v1::Envelope request;
      request.set_id(i + 1);
      request.set_method(std::string(snn::rpc::kJobList.name));
      request.mutable_credential()->set_munge(*credential);
      snn::v1::ListJobsRequest list;
      list.set_all_tenants(true);
      list.SerializeToString(request.mutable_payload());
      snn::asio::write(*stream, snn::asio::buffer(snn::EncodeFrame(request)), ec);
      if (!ec) ++unread_requests;
    }
    unread.push_back(std::move(stream));
  }
  return unread_requests;
}

int main(int argc, char** argv) {
  snn::ParseProgramFlags(&argc, &argv, "flood [FLAGS]");
  signal(SIGPIPE, SIG_IGN);
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);

  snn::bench::BenchCluster cluster;
  if (snn::Status s = cluster.Start("munge"); !s.ok()) {
    std::cerr << s.ToString() << "\n";
    return 1;
  }
  const snn::HostPort master = cluster.master();
  auto* auth = cluster.auth();
  auto tls = *snn::MakeClientTls({auth->ca_file(), "", ""});

  if (!SubmitBulkyJobs(cluster, master)) return 1;

  // snnctl from its own address (127.0.0.1) every 250 ms; the master's RSS with it.
  std::atomic<bool> done{false};
  std::atomic<int64_t> max_ms{0}, max_rss_kb{0};
  std::atomic<int> runs{0}, failed{0};
  std::thread monitor([&] {
    while (!done) {
      const auto t0 = snn::MonotonicNow();
      const std::string out = cluster.dir() + "/snnctl.out";
      const pid_t pid = snn::testing::SpawnLogged(
          {SNNCTL_BIN, "--master", master.ToString(), "--ca-file", auth->ca_file(),
           "--munge-socket", auth->munge_socket(), "--timeout", "10", "jobs", "--all-tenants"},
          out, out);
      int status = 0;
      waitpid(pid, &status, 0);
      const int64_t ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(snn::MonotonicNow() - t0).count();
      ++runs;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
      if (ms > max_ms) max_ms = ms;
      const int64_t rss = snn::testing::RssKb(cluster.master_pid());
      if (rss > max_rss_kb) max_rss_kb = rss;
      snn::SleepRealMs(250);
    }
  });
  const int64_t rss_before = snn::testing::RssKb(cluster.master_pid());

  snn::asio::io_context io;
  std::vector<std::unique_ptr<snn::tcp::socket>> idle;
  std::vector<std::unique_ptr<snn::TlsStream>> stalled, unread;
  int refused = 0;
  const auto flood_start = snn::MonotonicNow();
  for (int a = 0; a < FLAGS_addresses; ++a) {
    for (int i = 0; i < FLAGS_per_address; ++i) {
      auto s = snn::testing::ConnectFrom(io, Address(1, a), master.port, 2);
      if (!s) {
        ++refused;
        continue;
      }
      if (i % 2 == 0) {  // idle: never even starts TLS
        idle.push_back(std::move(s));
        continue;
      }
      auto stream = std::make_unique<snn::TlsStream>(std::move(*s), *tls);
      boost::system::error_code ec;
      stream->handshake(snn::ssl::stream_base::client, ec);
      if (ec) {
        ++refused;
        continue;
      }
      const uint32_t declared = (4 << 20) - 16;
      const uint8_t header[5] = {uint8_t(declared >> 24), uint8_t(declared >> 16),
                                 uint8_t(declared >> 8), uint8_t(declared), 0x0a};
      snn::asio::write(*stream, snn::asio::buffer(header, sizeof header), ec);
      stalled.push_back(std::move(stream));
    }
  }
  const int unread_requests = SendUnread(io, master, *tls, auth, unread);
  const double open_s = std::chrono::duration<double>(snn::MonotonicNow() - flood_start).count();
  std::printf(
      "flood: %zu idle and %zu stalled-frame connections held, %d refused, from %d "
      "addresses, in %.1f s; %d unread job.list requests on %zu connections\n",
      idle.size(), stalled.size(), refused, FLAGS_addresses, open_s, unread_requests,
      unread.size());
  snn::SleepRealMs((FLAGS_seconds)*1000);
  const int64_t rss_flood = snn::testing::RssKb(cluster.master_pid());
  done = true;
  monitor.join();
  std::printf("master RSS: %.1f MB before, %.1f MB peak, %.1f MB at the end of the flood\n",
              rss_before / 1024.0, max_rss_kb / 1024.0, rss_flood / 1024.0);
  std::printf("snnctl jobs --all-tenants: %d runs, %d failed, slowest %lld ms\n", runs.load(),
              failed.load(), static_cast<long long>(max_ms.load()));
  std::printf("max snnctl jobs ms: %lld, max master RSS MB: %.1f\n",
              static_cast<long long>(max_ms.load()), max_rss_kb / 1024.0);
  return failed > 0 ? 1 : 0;
}
