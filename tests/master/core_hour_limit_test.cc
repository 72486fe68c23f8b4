// Core-hours in a sliding window (issue 40: per-user and per-tenant limits, "unit-hours per
// window"), in-process with a manual clock: random jobs of random sizes, time limits and run
// times, against a user limit; in no window of the limit's length does the user's core-time
// ever pass it, while jobs do run, and wait saying why when they would.
#include <gtest/gtest.h>

#include <random>

#include "tests/master/in_process_master.h"

namespace snn {
namespace {

constexpr int64_t kWindowMs = 3'600'000;  // 1h
constexpr double kLimitCoreHours = 2;

class CoreHourLimitTest : public InProcessMaster {
 protected:
  void SetUp() override {
    AddNode("n1", 2, "sim-v1", 4, 100, false, /*streams=*/64);  // 32 cores
    v1::SchedulingConfig config = components_.scheduling.scheduling();
    config.mutable_user_limits()->set_max_core_hours(kLimitCoreHours);
    config.mutable_user_limits()->set_window_s(kWindowMs / 1000);
    components_.scheduling.SetScheduling(config);
  }
  static v1::JobSpec Spec(uint32_t cores, uint64_t time_limit_s) {
    v1::JobSpec spec;
    spec.set_name("j");
    spec.set_min_replicas(1);
    spec.set_time_limit_s(time_limit_s);
    spec.mutable_task()->set_command("/bin/true");
    auto* r = spec.mutable_task()->mutable_resources();
    r->set_cores(cores);
    r->set_ksps(10);
    r->set_streams(1);
    return spec;
  }
  void Report(const v1::JobRecord& job, v1::TaskState state) {
    v1::TaskStatus s;
    s.set_job_id(job.id());
    s.set_index(0);
    s.set_attempt(job.attempt());
    s.set_state(state);
    components_.lifecycle.ApplyTaskStatus("n1", s);
    journal_.Commit();
  }
};

struct Ran {
  int64_t start_ms, end_ms;
  uint32_t cores;
};

// The most core-ms any window of kWindowMs holds: the sum is piecewise linear in the window's
// position, so its maximum is at a window that starts or ends where a job starts or ends.
double MostInAnyWindow(const std::vector<Ran>& ran) {
  std::vector<int64_t> ends;
  for (const Ran& r : ran) {
    for (int64_t t : {r.start_ms, r.end_ms}) {
      ends.push_back(t);
      ends.push_back(t + kWindowMs);
    }
  }
  double most = 0;
  for (int64_t end : ends) {
    double sum = 0;
    for (const Ran& r : ran) {
      const int64_t a = std::max(r.start_ms, end - kWindowMs), b = std::min(r.end_ms, end);
      if (b > a) sum += static_cast<double>(b - a) * r.cores;
    }
    most = std::max(most, sum);
  }
  return most;
}

TEST_F(CoreHourLimitTest, NoWindowEverHoldsMoreThanTheLimitWhateverTheJobs) {
  const double limit_ms = kLimitCoreHours * 3'600'000;
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    std::map<uint64_t, int64_t> run_ms;  // job -> how long it runs once started
    std::map<uint64_t, Ran> running;
    std::vector<Ran> ran;
    int waited = 0;
    for (int minute = 0; minute < 8 * 60; ++minute) {
      for (uint32_t n = rng() % 3; n > 0; --n) {
        const uint64_t limit_s = 60 * (5 + rng() % 36);
        const uint32_t cores = 1 + rng() % 4;
        auto job = components_.lifecycle.Submit(Spec(cores, limit_s), "alice");
        journal_.Commit();
        if (cores * limit_s > kLimitCoreHours * 3600) {  // could never fit: refused
          ASSERT_FALSE(job.ok());
          continue;
        }
        ASSERT_TRUE(job.ok()) << job.status().ToString();
        run_ms[(*job)->id()] = static_cast<int64_t>(limit_s * 1000 * (20 + rng() % 81) / 100);
      }
      components_.scheduling.RunSchedulingPass();
      journal_.Commit();
      for (const auto& [id, job] : jobs_.jobs()) {
        if (job.state() == v1::PENDING &&
            job.reason().find("max_core_hours") != std::string::npos) {
          ++waited;
        }
        if (job.state() != v1::RUNNING || running.count(id)) continue;
        running[id] = Ran{clock_.NowMs(), 0, job.spec().task().resources().cores()};
        Report(job, v1::TASK_RUNNING);
      }
      clock_.AdvanceMs(60'000);
      for (auto it = running.begin(); it != running.end();) {
        if (it->second.start_ms + run_ms[it->first] > clock_.NowMs()) {
          ++it;
          continue;
        }
        Report(*jobs_.Find(it->first), v1::TASK_EXITED);
        it->second.end_ms = clock_.NowMs();
        ran.push_back(it->second);
        it = running.erase(it);
      }
    }
    for (auto& [id, r] : running) {
      Report(*jobs_.Find(id), v1::TASK_EXITED);
      ran.push_back({r.start_ms, clock_.NowMs(), r.cores});
    }
    EXPECT_GT(ran.size(), 20u);
    EXPECT_GT(waited, 0);
    EXPECT_LE(MostInAnyWindow(ran), limit_ms + 1e-6);
    // Nothing is left for the next seed, whose jobs start a window later.
    std::vector<uint64_t> pending;
    for (const auto& [id, job] : jobs_.jobs()) {
      if (job.state() == v1::PENDING) pending.push_back(id);
    }
    for (uint64_t id : pending)
      ASSERT_TRUE(components_.lifecycle.Cancel(*jobs_.Find(id), "test").ok());
    journal_.Commit();
    clock_.AdvanceMs(2 * kWindowMs);
  }
}

TEST_F(CoreHourLimitTest, AJobThatCouldNeverFitIsRefusedAtSubmit) {
  auto job = components_.lifecycle.Submit(Spec(4, 3600), "alice");  // 4 core-hours
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(),
            "this job may use 4 core-hours (4 cores for 1h), more than user alice may use in "
            "1h, 2 (policy limits.per_user.max_core_hours): ask for fewer cores or a shorter "
            "time_limit");
  EXPECT_TRUE(components_.lifecycle.Submit(Spec(2, 3600), "alice").ok());
}

}  // namespace
}  // namespace snn
