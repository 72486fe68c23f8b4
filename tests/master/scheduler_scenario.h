// A scheduler pass on a hand-made state: jobs (pending and running) and their resources kept
// alive for the pass, boards with the running jobs' cores taken, and a few plan readers.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "master/sched/scheduler.h"
#include "tests/master/test_jobs.h"

namespace snn::testing_helpers {

inline constexpr int64_t kMin = 60'000;

// Jobs and their resources, kept alive for the pass.
class Scenario {
 public:
  SchedJob& Pending(uint32_t cores, int64_t limit_ms = 10 * kMin, uint32_t replicas = 1,
                    const std::string& pool = "default") {
    SchedJob& j = Make(cores, limit_ms, replicas, pool);
    pending_.push_back(&j);
    return j;
  }
  // Running since `start_ms`, on the given placements.
  SchedJob& Running(uint32_t cores, int64_t start_ms, int64_t limit_ms,
                    std::vector<TaskPlacement> tasks, const std::string& pool = "default") {
    SchedJob& j = Make(cores, limit_ms, static_cast<uint32_t>(tasks.size()), pool);
    j.start_ms = start_ms;
    j.tasks = std::move(tasks);
    running_.push_back(&j);
    return j;
  }
  SchedulePlan Plan(std::vector<BoardCapacity> boards, const SchedulerPolicy& policy,
                    int64_t now_ms = 0) {
    return PlanPass(Input(std::move(boards), now_ms), policy);
  }
  // The pass's input: the jobs, and the boards with the running jobs' cores taken. Valid
  // until the next call.
  SchedulerInput Input(std::vector<BoardCapacity> boards, int64_t now_ms = 0) {
    SchedulerInput in;
    for (const SchedJob* p : pending_) in.pending.push_back(PendingJob::Of(*p));
    running_views_.clear();
    for (const SchedJob* r : running_) running_views_.push_back(RunningJob::Of(*r));
    in.running = running_views_;
    in.now_ms = now_ms;
    for (const SchedJob* r : running_) {
      for (const TaskPlacement& t : r->tasks) {
        for (auto& b : boards) {
          if (!b.grid || b.node != t.node || b.board != t.board) continue;  // or counted
          auto grid = std::make_shared<CoreGrid>(*b.grid);
          grid->Occupy(t.rect);
          b.grid = grid;
          b.ksps_free -= r->resources->ksps();
          b.streams_free -= r->resources->streams();
        }
      }
    }
    in.boards = std::move(boards);
    return in;
  }

 private:
  SchedJob& Make(uint32_t cores, int64_t limit_ms, uint32_t replicas, const std::string& pool) {
    v1::Resources& r = resources_.emplace_back();
    r.set_cores(cores);
    r.set_ksps(10);
    r.set_streams(1);
    SchedJob& j = jobs_.emplace_back();
    j.id = jobs_.size();
    j.pool = pool;
    j.tenant = "t";
    j.queue = "default";
    j.resources = &r;
    j.replicas = replicas;
    j.time_limit_ms = limit_ms;
    return j;
  }

  std::deque<v1::Resources> resources_;
  std::deque<SchedJob> jobs_;
  std::vector<const SchedJob*> pending_, running_;
  std::vector<RunningJob> running_views_;
};

inline SchedulerPolicy Fcfs() {
  SchedulerPolicy p;
  p.backfill = false;
  return p;
}

inline std::vector<uint64_t> Started(const SchedulePlan& plan) {
  std::vector<uint64_t> ids;
  for (const auto& s : plan.starts) ids.push_back(s.job_id);
  return ids;
}

inline const WaitDecision* WaitOf(const SchedulePlan& plan, uint64_t id) {
  for (const auto& w : plan.waits) {
    if (w.job_id == id) return &w;
  }
  return nullptr;
}

}  // namespace snn::testing_helpers
