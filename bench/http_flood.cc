// HTTP flood, by hand (issue 64): a master with its HTTP API (TLS and MUNGE, its own munged and
// CA) and an agent. Phase one: four clients without a token post 1 MiB job documents in a loop
// while 4,096 idle connections are held on the API's port (from 16 loopback addresses);
// throughout, root's `snnctl jobs --all-tenants` runs back to back. Phase two: 1,000 clients
// without a token each send a head that declares 1 MiB and half of that body, and hold. Prints
// snnctl's p99 and slowest answer and the master's RSS; the last line is
// `snnctl jobs p99 ms: N, max ms: M, RSS growth from half-sent bodies MB: G`.
// SNN_BENCH_MASTER_BIN runs another build's master (alternating with the previous build).
#include <gflags/gflags.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "bench/bench_cluster.h"
#include "common/base/clock.h"
#include "common/base/file_util.h"
#include "common/daemon/program_flags.h"
#include "common/rpc/tls.h"
#include "snn_paths.h"
#include "tests/test_util/process.h"
#include "tests/test_util/sockets.h"

DEFINE_int32(posters, 4, "clients without a token posting 1 MiB bodies in a loop");
DEFINE_int32(idle, 4096, "idle connections held on the API's port during phase one");
DEFINE_int32(half_sent, 1000, "half-sent bodies of phase two");
DEFINE_int32(seconds, 20, "how long phase one lasts");

namespace {

std::string Address(int block, int i) {
  return "127.0." + std::to_string(block) + "." + std::to_string(1 + i % 250);
}

std::string Head(size_t length) {
  return "POST /v1/jobs HTTP/1.1\r\nHost: master\r\nContent-Type: application/yaml\r\n"
         "Content-Length: " +
         std::to_string(length) + "\r\n\r\n";
}

}  // namespace

int main(int argc, char** argv) {
  snn::ParseProgramFlags(&argc, &argv, "http_flood [FLAGS]");
  signal(SIGPIPE, SIG_IGN);
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);

  const std::string port_file = "/tmp/snn_http_flood." + std::to_string(getpid()) + ".port";
  snn::bench::BenchCluster cluster;
  if (snn::Status s =
          cluster.Start("munge", {"--http_listen=127.0.0.1:0", "--http_port_file=" + port_file});
      !s.ok()) {
    std::cerr << s.ToString() << "\n";
    return 1;
  }
  uint16_t port = 0;
  for (int i = 0; i < 500 && port == 0; ++i) {
    auto text = snn::ReadWholeFile(port_file, "the port file");
    if (text.ok() && !text->empty()) port = static_cast<uint16_t>(std::stoi(*text));
    if (port == 0) snn::SleepRealMs(20);
  }
  std::remove(port_file.c_str());
  if (port == 0) {
    std::cerr << "the master's HTTP port never came\n";
    return 1;
  }
  const snn::HostPort master = cluster.master();
  auto* auth = cluster.auth();
  auto tls = *snn::MakeClientTls({auth->ca_file(), "", ""});

  // root's snnctl, back to back, from 127.0.0.1; every answer's time kept.
  std::atomic<bool> done{false};
  std::mutex mu;
  std::vector<int64_t> times_ms;
  std::atomic<int> failed{0};
  std::thread monitor([&] {
    while (!done) {
      const auto t0 = snn::MonotonicNow();
      const std::string out = cluster.dir() + "/snnctl.out";
      const pid_t pid = snn::testing::SpawnLogged(
          {SNNCTL_BIN, "--master", master.ToString(), "--ca-file", auth->ca_file(),
           "--munge-socket", auth->munge_socket(), "--timeout", "30", "jobs", "--all-tenants"},
          out, out);
      int status = 0;
      waitpid(pid, &status, 0);
      const int64_t ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(snn::MonotonicNow() - t0).count();
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
      std::lock_guard<std::mutex> lock(mu);
      times_ms.push_back(ms);
    }
  });
  snn::SleepRealMs(2000);  // the master settles; only the flood's answers are counted
  {
    std::lock_guard<std::mutex> lock(mu);
    times_ms.clear();
  }

  // Phase one: the posters, and the idle connections.
  const std::string body(1 << 20, 'x');
  std::atomic<int> posts{0}, answered{0};
  std::vector<std::thread> posters;
  for (int p = 0; p < FLAGS_posters; ++p) {
    posters.emplace_back([&, p] {
      snn::asio::io_context io;
      while (!done) {
        auto s = snn::testing::ConnectFrom(io, Address(3, p), port, 10);
        if (!s) continue;
        snn::TlsStream stream(std::move(*s), *tls);
        boost::system::error_code ec;
        stream.handshake(snn::ssl::stream_base::client, ec);
        if (!ec) snn::asio::write(stream, snn::asio::buffer(Head(body.size()) + body), ec);
        ++posts;
        char answer[256];
        const size_t n = ec ? 0 : stream.read_some(snn::asio::buffer(answer), ec);
        if (n > 0) ++answered;
      }
    });
  }
  snn::asio::io_context io;
  std::vector<std::unique_ptr<snn::tcp::socket>> idle;
  for (int i = 0; i < FLAGS_idle; ++i) {
    if (auto s = snn::testing::ConnectFrom(io, Address(1, i % 16), port, 5))
      idle.push_back(std::move(s));
  }
  const int64_t rss_flood_start = snn::testing::RssKb(cluster.master_pid());
  int64_t rss_flood_max = rss_flood_start;
  for (int t = 0; t < FLAGS_seconds * 4; ++t) {
    snn::SleepRealMs(250);
    rss_flood_max = std::max(rss_flood_max, snn::testing::RssKb(cluster.master_pid()));
  }
  std::vector<int64_t> flood_times;
  {
    std::lock_guard<std::mutex> lock(mu);
    flood_times = times_ms;
    times_ms.clear();
  }
  done = true;
  monitor.join();
  for (auto& t : posters) t.join();
  idle.clear();

  // Phase two: half-sent bodies without a token, held.
  snn::SleepRealMs(1000);
  const int64_t rss_before = snn::testing::RssKb(cluster.master_pid());
  const std::string half(512 * 1024, 'x');
  std::vector<std::unique_ptr<snn::TlsStream>> held;
  for (int i = 0; i < FLAGS_half_sent; ++i) {
    auto s = snn::testing::ConnectFrom(io, Address(2, i % 16), port, 2);
    if (!s) continue;
    auto stream = std::make_unique<snn::TlsStream>(std::move(*s), *tls);
    boost::system::error_code ec;
    stream->handshake(snn::ssl::stream_base::client, ec);
    if (!ec) snn::asio::write(*stream, snn::asio::buffer(Head(1 << 20) + half), ec);
    held.push_back(std::move(stream));
  }
  const int64_t rss_held = snn::testing::RssKb(cluster.master_pid());
  held.clear();
  snn::SleepRealMs(3000);
  const int64_t rss_after = snn::testing::RssKb(cluster.master_pid());

  std::sort(flood_times.begin(), flood_times.end());
  const auto at = [&](double q) {
    return flood_times.empty()
               ? -1
               : flood_times[std::min(flood_times.size() - 1, size_t(q * flood_times.size()))];
  };
  std::printf(
      "phase one: %d posts of 1 MiB without a token (%d answered), %zu idle connections "
      "opened; master RSS %.1f MB at its start, %.1f MB at most\n",
      posts.load(), answered.load(), size_t(FLAGS_idle), rss_flood_start / 1024.0,
      rss_flood_max / 1024.0);
  std::printf(
      "snnctl jobs --all-tenants: %zu runs (%d failed), median %lld ms, p99 %lld ms, "
      "max %lld ms\n",
      flood_times.size(), failed.load(), static_cast<long long>(at(0.5)),
      static_cast<long long>(at(0.99)),
      static_cast<long long>(flood_times.empty() ? -1 : flood_times.back()));
  std::printf(
      "phase two: %d half-sent bodies; master RSS %.1f MB before, %.1f MB held, %.1f MB "
      "after they closed\n",
      FLAGS_half_sent, rss_before / 1024.0, rss_held / 1024.0, rss_after / 1024.0);
  std::printf("snnctl jobs p99 ms: %lld, max ms: %lld, RSS growth from half-sent bodies MB: %.1f\n",
              static_cast<long long>(at(0.99)),
              static_cast<long long>(flood_times.empty() ? -1 : flood_times.back()),
              (std::max(rss_held, rss_after) - rss_before) / 1024.0);
  return failed > 0 ? 1 : 0;
}
