// One process per submit, as workflow tools drive Slurm (an sbatch per job): `--workers`
// (32) loops, each running `snnctl submit JOB.yaml` again and again for `--seconds`, against a
// master and agent of its own (TLS and MUNGE, as users run snnctl). Where Slurm's `sbatch` is
// installed (and a cluster answers), the same with `sbatch --wrap=true`, for comparison on the
// same machine. Last line: `snnctl submits/s: N` (and `sbatch submits/s: M`).
// --hold submits every job held (snnctl submit --hold, sbatch --hold), so that both measure the
// submit path alone: without it the master starts each job at once and the agent runs it beside
// the submits, while slurmctld, flooded so, defers starting any (none of about 1,900 in its 10 s
// on the host of 2026-11-28).
// --share runs the snnctl loops through a shared connection (snnctl connection start), as a
// workflow tool's user would start one first.
#include <gflags/gflags.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_cluster.h"
#include "common/base/clock.h"
#include "common/daemon/program_flags.h"
#include "snn_paths.h"
#include "tests/test_util/process.h"

DEFINE_int32(workers, 32, "concurrent submit loops");
DEFINE_double(seconds, 10, "measured duration");
DEFINE_string(snnctl, SNNCTL_BIN, "the snnctl to run (another build's, to compare)");
DEFINE_bool(hold, false, "submit the jobs held, with snnctl's and sbatch's --hold");
DEFINE_bool(share, false, "snnctl: through a shared connection (snnctl connection start)");

namespace {

// Runs `argv` in `workers` loops for `seconds`; the successful runs per second.
double Rate(const std::vector<std::string>& argv, const std::string& log) {
  std::atomic<int> ok{0}, failed{0};
  const snn::Stopwatch took;
  std::vector<std::thread> loops;
  for (int w = 0; w < FLAGS_workers; ++w) {
    loops.emplace_back([&, w] {
      const std::string out = log + "." + std::to_string(w);
      while (took.Seconds() < FLAGS_seconds) {
        const pid_t pid = snn::testing::SpawnLogged(argv, out, out);
        int status = 0;
        waitpid(pid, &status, 0);
        (WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ok : failed)++;
      }
    });
  }
  for (auto& t : loops) t.join();
  const double seconds = took.Seconds();
  if (failed > 0) std::fprintf(stderr, "%d runs failed (see %s.*)\n", failed.load(), log.c_str());
  return ok / seconds;
}

// Runs `argv` with this process's output; its exit code.
int RunShown(const std::vector<std::string>& argv) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
  snn::ParseProgramFlags(&argc, &argv, "submit_per_process [--workers=32] [--seconds=10] [--hold]");
  snn::bench::BenchCluster cluster;
  if (auto s = cluster.Start("munge"); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  const std::string job = cluster.dir() + "/job.yaml";
  std::ofstream(job) << "task: {command: /bin/true, resources: {cores: 1, ksps: 1}}\n";
  const auto* auth = cluster.auth();
  // What every snnctl run here starts with: the cluster's master, CA and munged.
  const std::vector<std::string> snnctl_base = {
      FLAGS_snnctl,    "--master",       cluster.master().ToString(), "--ca-file",
      auth->ca_file(), "--munge-socket", auth->munge_socket()};
  std::vector<std::string> snnctl_argv = snnctl_base;
  snnctl_argv.push_back("submit");
  std::vector<std::string> sbatch_argv = {"/usr/bin/sbatch", "--wrap=true", "-o", "/dev/null"};
  if (FLAGS_hold) {
    snnctl_argv.push_back("--hold");
    sbatch_argv.push_back("--hold");
  }
  snnctl_argv.push_back(job);
  // The shared connection's socket under the cluster's dir (removed with it).
  setenv("XDG_RUNTIME_DIR", cluster.dir().c_str(), 1);
  std::vector<std::string> connection_argv = snnctl_base;
  connection_argv.push_back("connection");
  if (FLAGS_share) {
    connection_argv.push_back("start");
    if (RunShown(connection_argv) != 0) return 1;
    connection_argv.pop_back();
  }
  const double snnctl = Rate(snnctl_argv, cluster.dir() + "/snnctl.out");
  if (FLAGS_share) {
    connection_argv.push_back("status");
    (void)!RunShown(connection_argv);
    connection_argv.back() = "stop";
    (void)!RunShown(connection_argv);
  }
  std::printf("snnctl submits/s: %.0f\n", snnctl);
  if (access("/usr/bin/sbatch", X_OK) == 0 && system("sinfo >/dev/null 2>&1") == 0) {
    const double sbatch = Rate(sbatch_argv, cluster.dir() + "/sbatch.out");
    std::printf("sbatch submits/s: %.0f\n", sbatch);
  }
  return 0;
}
