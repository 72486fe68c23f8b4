// A job array of a million elements through a real master (issue 40): how long its submit takes
// to be acknowledged (synced), and how many bytes its record takes in the master's store. Starts
// a master and one agent (temp dir, ephemeral port, its own munged and CA), submits --arrays
// arrays of --elements elements each, then stops the master and reads each array's record from
// its RocksDB (the agent's boards start some elements meanwhile, each a record of its own: the
// count is printed; the array's own record is one, whatever its size).
// Prints each submit, then `array submit ms (median): N` and `array record bytes (max): N`.
//   array_submit [--elements N] [--arrays N]
#include <gflags/gflags.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench/bench_cluster.h"
#include "common/base/array_spec.h"
#include "common/base/clock.h"
#include "master/store/journal.h"
#include "master/store/rocks_store.h"
#include "proto/job.pb.h"

DEFINE_uint32(elements, 1'000'000, "elements in each array");
DEFINE_int32(arrays, 3, "arrays submitted, one after another");

namespace snn::bench {
namespace {

int Run() {
  BenchCluster cluster;
  if (Status s = cluster.Start("munge"); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  RpcClient rpc(std::chrono::seconds(30));
  cluster.SetUp(rpc);
  if (Status s = rpc.Connect(cluster.master()); !s.ok()) {
    std::fprintf(stderr, "connect: %s\n", s.ToString().c_str());
    return 1;
  }
  v1::SubmitRequest req;
  v1::JobSpec& spec = *req.mutable_spec();
  spec.set_name("sweep");
  spec.mutable_task()->set_command("/bin/true");
  auto* r = spec.mutable_task()->mutable_resources();
  r->set_cores(1);
  r->set_ksps(10);
  auto array = ParseArraySpec("0-" + std::to_string(FLAGS_elements - 1) + "%64");
  if (!array.ok()) {
    std::fprintf(stderr, "%s\n", array.status().ToString().c_str());
    return 2;
  }
  *spec.mutable_array() = *array;
  std::vector<double> ms;
  std::vector<uint64_t> ids;
  for (int i = 0; i < FLAGS_arrays; ++i) {
    const auto start = MonotonicNow();
    auto submitted = rpc.Call(rpc::kJobSubmit, req);
    const double took = std::chrono::duration<double, std::milli>(MonotonicNow() - start).count();
    if (!submitted.ok()) {
      std::fprintf(stderr, "submit: %s\n", submitted.status().ToString().c_str());
      return 1;
    }
    ms.push_back(took);
    ids.push_back(submitted->job_id());
    std::printf("array %llu of %u elements acknowledged in %.2f ms\n",
                static_cast<unsigned long long>(submitted->tenant_job_id()), FLAGS_elements, took);
  }
  // Stop the master cleanly, then read what it stored.
  kill(cluster.master_pid(), SIGTERM);
  waitpid(cluster.master_pid(), nullptr, 0);
  auto store = RocksStore::Open(cluster.dir() + "/master/state");
  if (!store.ok()) {
    std::fprintf(stderr, "store: %s\n", store.status().ToString().c_str());
    return 1;
  }
  size_t largest = 0, records = 0;
  for (uint64_t id : ids) {
    auto stored = (*store)->Get(JobKey(id));
    if (!stored.ok() || !stored->has_value()) {
      std::fprintf(stderr, "job %llu is not in the store\n", static_cast<unsigned long long>(id));
      return 1;
    }
    largest = std::max(largest, (*stored)->size());
  }
  const Status scanned = (*store)->Scan(kJobKeyPrefix, "", [&](std::string_view, std::string_view) {
    ++records;
    return true;
  });
  if (!scanned.ok()) {
    std::fprintf(stderr, "reading the store: %s\n", scanned.ToString().c_str());
    return 1;
  }
  std::sort(ms.begin(), ms.end());
  std::printf("job records in the store: %zu (elements started: %zu)\n", records,
              records - ids.size());
  std::printf("array submit ms (median): %.2f\n", ms[ms.size() / 2]);
  std::printf("array record bytes (max): %zu\n", largest);
  return 0;
}

}  // namespace
}  // namespace snn::bench

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  return snn::bench::Run();
}
