// What watchers of the HTTP API cost the master (issue 36): N clients hold GET /v1/events open;
// the master's CPU is measured over an idle interval (keepalives included), then jobs are
// submitted over HTTP, and the time from each submission's send to its PENDING event at every
// watcher gives the delivery latency (p50, p99, max over watchers x jobs).
// With --long_polls=N, N clients instead wait on GET /v1/jobs/{id}?wait=5m of a job that has
// ended (so nothing wakes them) while the same idle and submission phases run.
// --hold_s=N instead holds the clients open and prints the master's address, so that
// bench/submit_load --master=ADDRESS --auth=none measures submissions beside them.
// Run by hand: build/bench/watchers_bench --watchers=1000 (a master with --auth=none, plain
// HTTP on loopback, one agent; all in a temp dir removed at the end).
#include <gflags/gflags.h>
#include <unistd.h>

// clang-format off
#include "common/rpc/asio.h"
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
// clang-format on

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "bench/bench_cluster.h"
#include "bench/process_cpu.h"
#include "common/base/clock.h"
#include "common/rpc/rpc_client.h"

DEFINE_int32(watchers, 1000, "event streams held open");
DEFINE_int32(long_polls, 0, "long polls held open instead of event streams");
DEFINE_int32(idle_s, 30, "seconds of idle measured (keepalives come every 15 s)");
DEFINE_int32(jobs, 20, "jobs submitted while the watchers watch");
DEFINE_int32(hold_s, 0,
             "instead of measuring: hold the clients open this long and print the master's "
             "address, for bench/submit_load --master=ADDRESS --auth=none beside them");

namespace snn::bench {
namespace {

namespace http = boost::beast::http;

// One HTTP request on a connection of its own (plain HTTP); the answer's body.
std::string Call(uint16_t port, const std::string& method, const std::string& target,
                 const std::string& token, const std::string& body = "") {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  http::request<http::string_body> request(http::string_to_verb(method), target, 11);
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::authorization, "Bearer " + token);
  request.body() = body;
  request.prepare_payload();
  http::write(socket, request);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(socket, buffer, response);
  return response.body();
}

// A client holding a request open; it notes when each job's PENDING (or any answer) arrives.
struct Watcher {
  explicit Watcher(asio::io_context& io) : socket(io) {}
  tcp::socket socket;
  std::array<char, 8192> buffer{};
  std::string text;
  std::map<int, MonotonicTime> seen;  // job number -> arrival
};

void Read(const std::shared_ptr<Watcher>& w) {
  w->socket.async_read_some(asio::buffer(w->buffer), [w](boost::system::error_code ec, size_t n) {
    if (ec) return;
    w->text.append(w->buffer.data(), n);
    size_t at;
    while ((at = w->text.find("\"name\":\"w")) != std::string::npos) {
      const size_t end = w->text.find('"', at + 9);
      if (end == std::string::npos) break;
      const int job = std::stoi(w->text.substr(at + 9, end - at - 9));
      if (w->text.find("\"state\":\"PENDING\"", at) != std::string::npos && !w->seen.count(job)) {
        w->seen[job] = MonotonicNow();
      }
      w->text.erase(0, end);
    }
    if (w->text.size() > 65536) w->text.erase(0, w->text.size() - 4096);
    Read(w);
  });
}

// With --long_polls, what they poll: a job that has ended, so nothing changes it again and they
// all wait ("": event streams).
std::string LongPollTarget(uint16_t port, const std::string& bearer, const std::string& job_doc) {
  if (FLAGS_long_polls == 0) return "";
  {
    char doc[256];
    std::snprintf(doc, sizeof doc, job_doc.c_str(), 0);
    Call(port, "POST", "/v1/jobs", bearer, doc);
    for (int i = 0; i < 200; ++i) {
      const std::string job = Call(port, "GET", "/v1/jobs/1", bearer);
      if (job.find("\"end_ms\": \"0\"") == std::string::npos) break;
      SleepRealMs(100);
    }
  }
  return "/v1/jobs/1?wait=5m";
}

// Each job's time from its submission to its event at each watcher: prints the figures, and
// how many deliveries are missing.
size_t ReportDeliveries(const std::vector<std::shared_ptr<Watcher>>& watchers,
                        const std::vector<MonotonicTime>& sent, const std::string& poll_target,
                        int clients, double idle) {
  std::vector<double> ms;
  size_t missing = 0;
  for (const auto& w : watchers) {
    for (int j = 1; j <= FLAGS_jobs; ++j) {
      auto it = w->seen.find(j);
      if (it == w->seen.end()) {
        ++missing;
        continue;
      }
      ms.push_back(std::chrono::duration<double, std::milli>(it->second - sent[j]).count());
    }
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms.empty() ? 0.0 : ms[static_cast<size_t>(q * (ms.size() - 1))];
  };
  std::printf("%s: %d\nmaster CPU while idle: %.2f%% of a core (over %d s)\n",
              poll_target.empty() ? "event streams" : "long polls", clients, idle * 100,
              FLAGS_idle_s);
  if (poll_target.empty()) {
    std::printf(
        "submission to event at each watcher: p50 %.1f ms, p99 %.1f ms, max %.1f ms "
        "(%zu deliveries, %zu missing)\n",
        at(0.5), at(0.99), ms.empty() ? 0.0 : ms.back(), ms.size(), missing);
  }
  return missing;
}

int Run() {
  char tmpl[] = "/tmp/snn_watch_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  BenchCluster cluster;
  Status started = cluster.Start(
      "none", {"--http_listen=127.0.0.1:0", "--http_port_file=" + dir + "/http.port"});
  if (!started.ok()) {
    std::fprintf(stderr, "%s\n", started.ToString().c_str());
    return 1;
  }
  std::string port_text;
  for (int i = 0; i < 100 && port_text.empty(); ++i) {
    std::ifstream(dir + "/http.port") >> port_text;
    if (port_text.empty()) SleepRealMs(50);
  }
  const uint16_t port = static_cast<uint16_t>(std::stoi(port_text));
  RpcClient rpc(std::chrono::seconds(10));
  cluster.SetUp(rpc);
  if (Status s = rpc.Connect(cluster.master()); !s.ok()) {
    std::fprintf(stderr, "connect: %s\n", s.ToString().c_str());
    return 1;
  }
  auto token = rpc.Call(rpc::kTokenCreate, v1::TokenCreateRequest());
  if (!token.ok()) {
    std::fprintf(stderr, "token: %s\n", token.status().ToString().c_str());
    return 1;
  }
  const std::string bearer = token->token();
  const std::string job_doc =
      "name: w%d\ntask:\n  command: /bin/true\n  resources: {cores: 1, ksps: 10}\n";

  // The watchers (or long polls on a job), on one thread.
  const std::string poll_target = LongPollTarget(port, bearer, job_doc);
  const int clients = FLAGS_long_polls > 0 ? FLAGS_long_polls : FLAGS_watchers;
  asio::io_context io;
  std::vector<std::shared_ptr<Watcher>> watchers;
  for (int i = 0; i < clients; ++i) {
    auto w = std::make_shared<Watcher>(io);
    w->socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    const std::string request = "GET " + (poll_target.empty() ? "/v1/events" : poll_target) +
                                " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + bearer +
                                "\r\n\r\n";
    asio::write(w->socket, asio::buffer(request));
    Read(w);
    watchers.push_back(w);
  }
  std::thread reader([&] { io.run(); });
  SleepRealMs(2000);  // every stream open
  if (FLAGS_hold_s > 0) {
    std::printf("%d %s open; master at %s:%d for %d s\n", clients,
                poll_target.empty() ? "event streams" : "long polls", cluster.master().host.c_str(),
                cluster.master().port, FLAGS_hold_s);
    std::fflush(stdout);
    SleepRealMs(int64_t{FLAGS_hold_s} * 1000);
    io.stop();
    reader.join();
    std::filesystem::remove_all(dir);
    return 0;
  }

  const double cpu0 = CpuSeconds(cluster.master_pid());
  SleepRealMs(int64_t{FLAGS_idle_s} * 1000);
  const double idle = (CpuSeconds(cluster.master_pid()) - cpu0) / FLAGS_idle_s;

  std::vector<MonotonicTime> sent(FLAGS_jobs + 1);
  for (int j = 1; j <= FLAGS_jobs; ++j) {
    char doc[256];
    std::snprintf(doc, sizeof doc, job_doc.c_str(), j);
    sent[j] = MonotonicNow();
    Call(port, "POST", "/v1/jobs", bearer, doc);
    SleepRealMs(200);
  }
  SleepRealMs(2000);
  io.stop();
  reader.join();

  const size_t missing = ReportDeliveries(watchers, sent, poll_target, clients, idle);
  std::filesystem::remove_all(dir);
  return missing == 0 || !poll_target.empty() ? 0 : 1;
}

}  // namespace
}  // namespace snn::bench

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  return snn::bench::Run();
}
