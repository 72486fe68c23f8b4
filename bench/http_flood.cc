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

// The port the master wrote to `port_file` once its HTTP listener was up (0: it never came).
uint16_t WaitForPort(const std::string& port_file) {
  uint16_t port = 0;
  for (int i = 0; i < 500 && port == 0; ++i) {
    auto text = snn::ReadWholeFile(port_file, "the port file");
    if (text.ok() && !text->empty()) port = static_cast<uint16_t>(std::stoi(*text));
    if (port == 0) snn::SleepRealMs(20);
  }
  return port;
}

// The master's RSS before, while and after --half_sent bodies without a token are held.
struct HalfSentRss {
  int64_t before, held, after;
};

// Phase two: half-sent bodies without a token, held, then closed.
HalfSentRss HoldHalfSentBodies(snn::asio::io_context& io, uint16_t port, snn::ssl::context& tls,
                               pid_t master_pid) {
  snn::SleepRealMs(1000);
  const int64_t rss_before = snn::testing::RssKb(master_pid);
  const std::string half(512 * 1024, 'x');
  std::vector<std::unique_ptr<snn::TlsStream>> held;
  for (int i = 0; i < FLAGS_half_sent; ++i) {
    auto s = snn::testing::ConnectFrom(io, Address(2, i % 16), port, 2);
    if (!s) continue;
    auto stream = std::make_unique<snn::TlsStream>(std::move(*s), tls);
    boost::system::error_code ec;
    stream->handshake(snn::ssl::stream_base::client, ec);
    if (!ec) snn::asio::write(*stream, snn::asio::buffer(Head(1 << 20) + half), ec);
    held.push_back(std::move(stream));
  }
  const int64_t rss_held = snn::testing::RssKb(master_pid);
  held.clear();
  snn::SleepRealMs(3000);
  const int64_t rss_after = snn::testing::RssKb(master_pid);

  return {rss_before, rss_held, rss_after};
}

// What the two phases measured.
struct Figures {
  std::vector<int64_t> flood_times;  // each snnctl jobs run's, in ms, during phase one
  int failed, posts, answered;
  int64_t rss_flood_start, rss_flood_max;
  HalfSentRss half_sent;
};

void Report(Figures f) {
  std::vector<int64_t>& flood_times = f.flood_times;
  const auto [rss_before, rss_held, rss_after] = f.half_sent;
  std::sort(flood_times.begin(), flood_times.end());
  const auto at = [&](double q) {
    return flood_times.empty()
               ? -1
               : flood_times[std::min(flood_times.size() - 1, size_t(q * flood_times.size()))];
  };
  std::printf(
      "phase one: %d posts of 1 MiB without a token (%d answered), %zu idle connections "
      "opened; master RSS %.1f MB at its start, %.1f MB at most\n",
      f.posts, f.answered, size_t(FLAGS_idle), f.rss_flood_start / 1024.0,
      f.rss_flood_max / 1024.0);
  std::printf(
      "snnctl jobs --all-tenants: %zu runs (%d failed), median %lld ms, p99 %lld ms, "
      "max %lld ms\n",
      flood_times.size(), f.failed, static_cast<long long>(at(0.5)),
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
}

// --posters threads, each posting 1 MiB bodies without a token from an address of its own,
// again and again until `done`.
std::vector<std::thread> StartPosters(const std::atomic<bool>& done, uint16_t port,
                                      snn::ssl::context& tls, const std::string& body,
                                      std::atomic<int>& posts, std::atomic<int>& answered) {
  std::vector<std::thread> posters;
  for (int p = 0; p < FLAGS_posters; ++p) {
    posters.emplace_back([&done, &tls, &body, &posts, &answered, port, p] {
      snn::asio::io_context io;
      while (!done) {
        auto s = snn::testing::ConnectFrom(io, Address(3, p), port, 10);
        if (!s) continue;
        snn::TlsStream stream(std::move(*s), tls);
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
  return posters;
}

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
  const uint16_t port = WaitForPort(port_file);
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
  std::vector<std::thread> posters = StartPosters(done, port, *tls, body, posts, answered);
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

  const auto [rss_before, rss_held, rss_after] =
      HoldHalfSentBodies(io, port, *tls, cluster.master_pid());

  Report({std::move(flood_times), failed.load(), posts.load(), answered.load(), rss_flood_start,
          rss_flood_max, HalfSentRss{rss_before, rss_held, rss_after}});
  return failed > 0 ? 1 : 0;
}
