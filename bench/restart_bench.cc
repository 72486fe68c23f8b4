// Master restart with a large store: writes a store of --jobs jobs (--hot of them pending or
// running, the rest finished and archived, as the master archives them) once, then starts a
// real snn-master on a copy of it --runs times and measures the time from spawning it to its
// first answered request (a `job.list` of at most one job), and its resident memory then. Prints
// the median as its last line.
//   build-dev/bench/restart_bench --jobs=1000000 --hot=100000 --store=/tmp/snn_restart_store
// The store is kept in --store and reused by later runs with the same --jobs and --hot.
#include <gflags/gflags.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "bench/sim_board.h"
#include "common/base/clock.h"
#include "common/daemon/program_flags.h"
#include "common/rpc/rpc_client.h"
#include "master/jobs/job_archive.h"
#include "master/store/journal.h"
#include "master/store/rocks_store.h"
#include "proto/node.pb.h"
#include "snn_paths.h"
#include "tests/test_util/process.h"

DEFINE_uint64(jobs, 1000000, "jobs in the store");
DEFINE_uint64(hot, 100000, "of them pending or running (one in ten running)");
DEFINE_uint32(nodes, 1000, "nodes in the store (4 boards of 16x16 each)");
DEFINE_string(store, "/tmp/snn_restart_store", "where the generated store is kept and reused");
DEFINE_int32(runs, 3, "restarts measured");

namespace {

namespace fs = std::filesystem;

snn::v1::JobRecord MakeJob(uint64_t id, snn::v1::JobState state, int64_t now_ms) {
  snn::v1::JobRecord job;
  job.set_id(id);
  const std::string tenant = "lab-" + std::to_string(id % 50);
  job.set_tenant(tenant);
  job.set_tenant_job_id(id / 50 + 1);
  job.set_state(state);
  job.set_submit_ms(now_ms - 86400000 + static_cast<int64_t>(id));
  job.set_reason(state == snn::v1::PENDING ? "submitted" : "started on node-1/board0");
  auto* spec = job.mutable_spec();
  spec->set_name("sweep-" + std::to_string(id));
  spec->set_tenant(tenant);
  spec->set_user("user" + std::to_string(id % 200));
  spec->set_pool("default");
  spec->set_queue("normal");
  spec->set_min_replicas(1);
  spec->set_time_limit_s(3600);
  auto* task = spec->mutable_task();
  task->set_command("/opt/models/run-network");
  task->add_args("--steps=100000");
  task->add_args("--seed=" + std::to_string(id));
  (*task->mutable_env())["OMP_NUM_THREADS"] = "1";
  auto* r = task->mutable_resources();
  r->set_cores(4);
  r->set_ksps(50);
  r->set_streams(1);
  auto* t = job.add_history();
  t->set_time_ms(job.submit_ms());
  t->set_to(snn::v1::PENDING);
  t->set_reason("submitted by " + spec->user());
  if (state == snn::v1::PENDING) return job;
  job.set_attempt(1);
  job.set_start_ms(job.submit_ms() + 1000);
  auto* s = job.add_history();
  s->set_time_ms(job.start_ms());
  s->set_from(snn::v1::PENDING);
  s->set_to(snn::v1::RUNNING);
  s->set_reason(job.reason());
  auto* task_record = job.add_tasks();
  task_record->set_attempt(1);
  const uint64_t slot = id % (FLAGS_nodes * 4 * 16);
  task_record->set_node("node-" + std::to_string(slot / 64));
  task_record->set_board(static_cast<uint32_t>(slot / 16 % 4));
  task_record->set_state(snn::v1::TASK_RUNNING);
  auto* rect = task_record->mutable_mapping()->mutable_rect();
  rect->set_x(static_cast<uint32_t>(slot % 4) * 4);
  rect->set_y(static_cast<uint32_t>(slot / 4 % 4) * 4);
  rect->set_width(2);
  rect->set_height(2);
  task_record->set_start_ms(job.start_ms());
  if (state == snn::v1::RUNNING) return job;
  task_record->set_state(snn::v1::TASK_EXITED);
  task_record->set_end_ms(job.start_ms() + 600000);
  job.set_end_ms(task_record->end_ms());
  auto* e = job.add_history();
  e->set_time_ms(job.end_ms());
  e->set_from(snn::v1::RUNNING);
  e->set_to(state);
  e->set_reason("task 0 on " + task_record->node() + "/board0 exited with code 0");
  job.set_reason(e->reason());
  return job;
}

snn::Status Generate(const std::string& dir) {
  auto store = snn::RocksStore::Open(dir);
  if (!store.ok()) return store.status();
  snn::Journal journal(**store, [](std::function<void()> fn) { fn(); });
  snn::JobArchive archive(**store);
  const int64_t now_ms = snn::SystemClock().NowMs();
  for (uint32_t n = 0; n < FLAGS_nodes; ++n) {
    snn::v1::NodeRecord node;
    node.set_name("node-" + std::to_string(n));
    node.add_pools("default");
    for (uint32_t b = 0; b < 4; ++b) snn::bench::AddSimBoard(node, b);
    journal.PutNode(node);
  }
  // The hot jobs are the newest: one in ten of them running, the rest pending.
  const uint64_t first_hot = FLAGS_jobs - FLAGS_hot + 1;
  for (uint64_t id = 1; id <= FLAGS_jobs; ++id) {
    if (id < first_hot) {
      archive.Add(MakeJob(id, id % 10 == 0 ? snn::v1::FAILED : snn::v1::COMPLETED, now_ms),
                  journal);
    } else {
      journal.PutJob(MakeJob(id, id % 10 == 0 ? snn::v1::RUNNING : snn::v1::PENDING, now_ms));
    }
    if (id % 10000 == 0) {
      journal.Commit();
      if (id % 100000 == 0) std::cerr << "generated " << id << " jobs\n";
    }
  }
  journal.Commit();
  (*store)->Close();
  return snn::Status::Ok();
}

long RssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  snn::ParseProgramFlags(&argc, &argv,
                         "restart_bench [--jobs=N] [--hot=N] [--store=DIR] [--runs=N]");
  if (FLAGS_hot > FLAGS_jobs || FLAGS_jobs == 0) {
    std::cerr << "restart_bench: --hot must be at most --jobs, and --jobs positive\n";
    return 2;
  }
  const std::string marker = FLAGS_store + "/generated-" + std::to_string(FLAGS_jobs) + "-" +
                             std::to_string(FLAGS_hot) + "-" + std::to_string(FLAGS_nodes);
  if (!fs::exists(marker)) {
    fs::remove_all(FLAGS_store);
    fs::create_directories(FLAGS_store + "/master");
    const auto start = snn::MonotonicNow();
    if (auto s = Generate(FLAGS_store + "/master/state"); !s.ok()) {
      std::cerr << "restart_bench: " << s.ToString() << "\n";
      return 1;
    }
    std::ofstream(marker) << "done\n";
    std::cerr << "generated the store in "
              << std::chrono::duration<double>(snn::MonotonicNow() - start).count() << " s\n";
  }
  std::vector<double> times_ms;
  std::vector<long> rss_kib;
  for (int run = 0; run < FLAGS_runs; ++run) {
    const std::string dir = "/tmp/snn_restart_run";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy(FLAGS_store + "/master", dir + "/master", fs::copy_options::recursive);
    const auto start = snn::MonotonicNow();
    const pid_t pid = snn::testing::SpawnLogged(
        {SNN_MASTER_BIN, "--auth=none", "--listen=127.0.0.1:0", "--data_dir=" + dir + "/master",
         "--port_file=" + dir + "/port", "--minloglevel=1", "--metrics_listen=", "--http_listen="},
        dir + "/master.log", dir + "/master.log");
    bool answered = false;
    while (snn::MonotonicNow() - start < std::chrono::seconds(120)) {
      int port = 0;
      if (std::ifstream in(dir + "/port"); !(in >> port) || port == 0) {
        snn::SleepRealMs(1);
        continue;
      }
      snn::RpcClient client(std::chrono::milliseconds(2000));
      snn::v1::Credential cred;
      cred.set_user("bench");
      client.set_credential(cred);
      if (!client.Connect(snn::HostPort{"127.0.0.1", static_cast<uint16_t>(port)}).ok()) {
        snn::SleepRealMs(1);
        continue;
      }
      snn::v1::ListJobsRequest req;
      req.set_limit(1);
      auto page = client.Call(snn::rpc::kJobList, req);
      if (page.ok()) {
        answered = true;
        break;
      }
    }
    const double ms =
        std::chrono::duration<double, std::milli>(snn::MonotonicNow() - start).count();
    const long rss = RssKiB(pid);
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    if (!answered) {
      std::cerr << "restart_bench: the master never answered; see " << dir << "/master.log\n";
      return 1;
    }
    std::printf("run %d: first answer after %.0f ms, RSS %.0f MiB\n", run + 1, ms, rss / 1024.0);
    times_ms.push_back(ms);
    rss_kib.push_back(rss);
  }
  std::sort(times_ms.begin(), times_ms.end());
  std::sort(rss_kib.begin(), rss_kib.end());
  std::printf(
      "restart with %llu jobs (%llu hot): first answer after %.0f ms (median of %d), RSS %.0f "
      "MiB\n",
      static_cast<unsigned long long>(FLAGS_jobs), static_cast<unsigned long long>(FLAGS_hot),
      times_ms[times_ms.size() / 2], FLAGS_runs, rss_kib[rss_kib.size() / 2] / 1024.0);
  fs::remove_all("/tmp/snn_restart_run");
  return 0;
}
