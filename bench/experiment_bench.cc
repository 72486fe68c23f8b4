// An experiment service under load, run by hand (issue 37): --users users (each a tenant of
// its own, all admitted by the service) send --per_user experiments of --steps 1 ms steps each
// (--mixed: user u's take 1 + u % 3 times as long, so that users ask for unequal board time)
// to one service on a simulated board, through the real master and agent, in requests of 100,
// all at once; then each reads its results. From the agent's timestamps on every experiment:
// - Jain's index of per-user service: the board time each user got while every user still had
//   experiments waiting (from the last user's first start to the first user's last end);
// - how busy the board was: the experiments' steps (what users asked for) over the span from
//   the first start to the last end;
// - the overhead per experiment: the board's idle gap before it (the previous one's end to its
//   start: the network's build, a reset between users, a turn's hand-over), plus whatever it
//   held the board beyond its steps (a pacing sleep that overshot).
#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>
#include <vector>

#include "common/base/clock.h"
#include "common/daemon/program_flags.h"
#include "common/rpc/rpc_methods.h"
#include "tests/integration/cluster.h"

DEFINE_int32(users, 10, "users sending experiments at once");
DEFINE_int32(per_user, 1000, "experiments each user sends");
DEFINE_int32(steps, 5, "each experiment's steps of 1 ms");
DEFINE_int32(period_ms, 20, "the service's turn (service.period_ms)");
DEFINE_bool(mixed, false, "user u's experiments take (1 + u % 3) x --steps: unequal costs");

namespace snn::testing {
namespace {

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

uint32_t StepsOf(int user) {
  return static_cast<uint32_t>(FLAGS_steps * (FLAGS_mixed ? 1 + user % 3 : 1));
}

v1::ExperimentSpec Experiment(uint32_t steps) {
  v1::ExperimentSpec spec;
  v1::Model& m = *spec.mutable_model();
  m.set_name("relay");
  m.set_timestep_ms(1);
  for (const char* name : {"in", "out"}) {
    v1::Population* p = m.add_populations();
    p->set_name(name);
    p->set_size(16);
    p->set_role(std::string(name) == "in" ? "input" : "output");
  }
  v1::Projection* proj = m.add_projections();
  proj->set_from("in");
  proj->set_to("out");
  proj->set_connectivity("one_to_one");
  proj->set_weight(1.5);
  proj->set_delay_steps(1);
  spec.set_steps(steps);
  for (uint32_t n = 0; n < 16; ++n) {
    v1::NamedSpike* in = spec.add_inputs();
    in->set_population("in");
    in->set_neuron(n);
    in->set_step(n % steps);
  }
  return spec;
}

// Fairness, board use and overhead, from every user's experiments as the service ran them.
void ReportRuns(const std::vector<std::vector<v1::ExperimentRecord>>& results, double wall_s) {
  struct Run {
    int64_t start, end;
    int user;
  };
  std::vector<Run> runs;
  int failed = 0;
  int64_t window_from = 0, window_to = INT64_MAX;
  for (int u = 0; u < FLAGS_users; ++u) {
    int64_t first = INT64_MAX, last = 0;
    for (const auto& r : results[u]) {
      failed += r.state() != v1::EXPERIMENT_DONE;
      runs.push_back({r.start_us(), r.end_us(), u});
      first = std::min(first, r.start_us());
      last = std::max(last, r.end_us());
    }
    window_from = std::max(window_from, first);
    window_to = std::min(window_to, last);
  }
  ASSERT_EQ(failed, 0);
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.start < b.start; });
  // Useful board time is what the experiments asked for (steps x 1 ms); the rest of each one's
  // time on the board (a sleep that overshot) is overhead, as is the idle gap before it.
  double busy_us = 0;
  std::vector<double> overhead_us;
  std::vector<double> served(FLAGS_users, 0);
  for (size_t i = 0; i < runs.size(); ++i) {
    const double paced_us = StepsOf(runs[i].user) * 1000.0;
    busy_us += paced_us;
    const double gap = i > 0 ? double(runs[i].start - runs[i - 1].end) : 0;
    overhead_us.push_back(gap + double(runs[i].end - runs[i].start) - paced_us);
    const int64_t from = std::max(runs[i].start, window_from);
    const int64_t to = std::min(runs[i].end, window_to);
    if (to > from) served[runs[i].user] += double(to - from);
  }
  const double span_us = double(runs.back().end - runs.front().start);
  double sum = 0, squares = 0;
  for (double s : served) {
    sum += s;
    squares += s * s;
  }
  const double jain = sum * sum / (FLAGS_users * squares);
  std::printf("%d users x %d experiments of %d ms%s (period %d ms): %.1f s wall\n", FLAGS_users,
              FLAGS_per_user, FLAGS_steps, FLAGS_mixed ? " x (1 + user % 3)" : "", FLAGS_period_ms,
              wall_s);
  std::printf("jain's index of per-user board time while all waited: %.4f (window %.1f s)\n", jain,
              double(window_to - window_from) / 1e6);
  std::printf("board busy: %.1f%% (%.1f s of experiments' steps in %.1f s)\n",
              100 * busy_us / span_us, busy_us / 1e6, span_us / 1e6);
  std::printf(
      "overhead per experiment (the board's idle gap before it, and its time beyond its "
      "steps): p50 %.3f ms, p90 %.3f ms, p99 %.3f ms\n",
      Percentile(overhead_us, 0.5) / 1000, Percentile(overhead_us, 0.9) / 1000,
      Percentile(overhead_us, 0.99) / 1000);
}

TEST(ExperimentBench, TenUsersThroughOneService) {
  TestCluster cluster;
  cluster.StartMaster({"--minloglevel=1"});
  cluster.StartAgent("node1", SmallBoards(1, 8), {"--minloglevel=1"});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  v1::SubmitRequest submit;
  v1::JobSpec& spec = *submit.mutable_spec();
  spec.set_kind(v1::SERVICE);
  spec.set_name("service");
  spec.set_time_limit_s(3600);
  spec.mutable_service()->set_period_ms(static_cast<uint32_t>(FLAGS_period_ms));
  for (int u = 1; u < FLAGS_users; ++u)
    spec.mutable_service()->add_tenants("u" + std::to_string(u));
  spec.mutable_task()->mutable_resources()->set_cores(4);
  spec.mutable_task()->mutable_resources()->set_ksps(1000);
  auto owner = cluster.Client("u0");
  auto service = owner->Call(rpc::kJobSubmit, submit);
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    v1::ShowJobRequest show;
    show.mutable_job()->set_tenant_job_id(service->tenant_job_id());
    auto job = owner->Call(rpc::kJobShow, show);
    return job.ok() && job->job().state() == v1::RUNNING;
  }));

  std::vector<std::vector<v1::ExperimentRecord>> results(FLAGS_users);
  std::vector<std::thread> users;
  const Stopwatch started;
  for (int u = 0; u < FLAGS_users; ++u) {
    users.emplace_back([&, u] {
      auto client = cluster.Client("u" + std::to_string(u));
      v1::ExperimentSubmitRequest req;
      req.set_service_tenant("u0");
      req.set_service(service->tenant_job_id());
      for (int sent = 0; sent < FLAGS_per_user; sent += 100) {
        req.clear_experiments();  // requests of 100, the last of what is left
        for (int i = 0; i < std::min(100, FLAGS_per_user - sent); ++i) {
          *req.add_experiments() = Experiment(StepsOf(u));
        }
        auto queued = client->Call(rpc::kExperimentSubmit, req);
        ASSERT_TRUE(queued.ok()) << queued.status().ToString();
      }
      v1::ExperimentListRequest list;
      list.set_service_tenant("u0");
      list.set_service(service->tenant_job_id());
      list.set_limit(1);
      for (;;) {  // until none of this user's waits: a cheap question, asked twice a second
        auto page = client->Call(rpc::kExperimentList, list);
        ASSERT_TRUE(page.ok()) << page.status().ToString();
        if (page->queued() == 0) break;
        SleepRealMs(500);
      }
      list.set_limit(10000);
      auto all = client->Call(rpc::kExperimentList, list);
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      results[u].assign(all->experiments().begin(), all->experiments().end());
      ASSERT_EQ(results[u].size(), size_t(FLAGS_per_user));
    });
  }
  for (auto& t : users) t.join();
  const double wall_s = started.Seconds();

  ReportRuns(results, wall_s);
}

}  // namespace
}  // namespace snn::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  snn::ParseProgramFlags(&argc, &argv,
                         "experiment_bench [--users=10] [--per_user=1000] [--steps=5] "
                         "[--period_ms=20] [--mixed]");
  return RUN_ALL_TESTS();
}
