// Licenses in the scheduler (issue 40): the running jobs never hold more of a license than the
// site has, over many passes of random jobs; a job asking for many is not starved by a stream
// of jobs asking for one; a job waiting for licenses says which.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>

#include "master/sched/scheduler.h"
#include "tests/master/test_jobs.h"

namespace snn {
namespace {

using testing_helpers::Board;

struct Sim {
  std::deque<v1::Resources> resources;
  std::deque<google::protobuf::Map<std::string, uint32_t>> licenses;
  std::deque<SchedJob> jobs;
  std::vector<SchedJob*> pending, running;
  std::map<uint64_t, int> ends_at;  // running job -> the round it ends

  SchedJob& Submit(std::map<std::string, uint32_t> asked) {
    v1::Resources& r = resources.emplace_back();
    r.set_cores(1);
    r.set_ksps(1);
    r.set_streams(1);
    auto& l = licenses.emplace_back();
    l.insert(asked.begin(), asked.end());
    SchedJob& j = jobs.emplace_back();
    j.id = jobs.size();
    j.pool = "default";
    j.tenant = "t";
    j.queue = "default";
    j.user = "u";
    j.resources = &r;
    j.licenses = l.empty() ? nullptr : &l;
    j.time_limit_ms = 60'000;
    pending.push_back(&j);
    return j;
  }
  // One pass on a board with room for everything: licenses are all that can hold a job back.
  SchedulePlan Pass(const SchedulerPolicy& policy, int round, std::mt19937& rng) {
    SchedulerInput in;
    for (SchedJob* p : pending) in.pending.push_back(PendingJob::Of(*p));
    std::vector<RunningJob> views;
    for (SchedJob* r : running) views.push_back(RunningJob::Of(*r));
    in.running = views;
    in.boards.push_back(Board("n", 0, 4096));
    in.now_ms = round * 1000;
    SchedulePlan plan = PlanPass(std::move(in), policy);
    for (const auto& s : plan.starts) {
      auto it = std::find_if(pending.begin(), pending.end(),
                             [&](SchedJob* j) { return j->id == s.job_id; });
      running.push_back(*it);
      pending.erase(it);
      ends_at[s.job_id] = round + 1 + static_cast<int>(rng() % 5);
    }
    return plan;
  }
  void End(int round) {
    std::erase_if(running, [&](SchedJob* j) { return ends_at[j->id] <= round; });
  }
  std::map<std::string, uint32_t> Held() const {
    std::map<std::string, uint32_t> held;
    for (const SchedJob* j : running) {
      if (j->licenses == nullptr) continue;
      for (const auto& [name, n] : *j->licenses) held[name] += n;
    }
    return held;
  }
};

TEST(LicenseTest, RunningJobsNeverHoldMoreThanTheSiteHas) {
  SchedulerPolicy policy;
  policy.licenses = {{"camera", 2}, {"seat", 5}};
  std::mt19937 rng(7);
  Sim sim;
  size_t started = 0;
  for (int round = 0; round < 2000; ++round) {
    for (int k = static_cast<int>(rng() % 4); k > 0; --k) {
      std::map<std::string, uint32_t> asked;
      if (rng() % 2) asked["camera"] = 1 + rng() % 2;
      if (rng() % 2) asked["seat"] = 1 + rng() % 5;
      sim.Submit(asked);
    }
    started += sim.Pass(policy, round, rng).starts.size();
    const auto held = sim.Held();
    for (const auto& [name, n] : held) {
      ASSERT_LE(n, policy.licenses.at(name)) << name << " in round " << round;
    }
    sim.End(round);
  }
  EXPECT_GT(started, 1000u);  // it did start jobs, not just hold them back
}

TEST(LicenseTest, AJobAskingForManyIsNotStarvedByJobsAskingForOne) {
  SchedulerPolicy policy;
  policy.licenses = {{"seat", 3}};
  std::mt19937 rng(1);
  Sim sim;
  sim.Submit({{"seat", 1}});
  sim.Pass(policy, 0, rng);  // one seat taken
  const uint64_t big = sim.Submit({{"seat", 3}}).id;
  bool said = false;
  for (int round = 1; round < 50; ++round) {
    sim.Submit({{"seat", 1}});  // a stream of small ones behind it
    SchedulePlan plan = sim.Pass(policy, round, rng);
    for (const auto& w : plan.waits) {
      if (w.job_id == big) said = w.why() == "waiting for licenses: seat 3 (2 of 3 free)" || said;
    }
    for (const SchedJob* r : sim.running) {
      if (r->id == big) {
        EXPECT_TRUE(said);
        return;
      }
    }
    sim.End(round);
  }
  FAIL() << "the job asking for all three seats never started";
}

}  // namespace
}  // namespace snn
