#include "master/sched/start_forecast.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "master/sched/pool_state.h"
#include "master/sched/runtime_prediction.h"
#include "master/sched/scheduler.h"
#include "master/sched/window_limits.h"

namespace snn {
namespace {

// The boards as the plan goes: what each job it starts takes, and gives back at its limit.
class ForecastBoards {
 public:
  explicit ForecastBoards(std::vector<BoardCapacity> boards) : boards_(std::move(boards)) {
    for (size_t i = 0; i < boards_.size(); ++i) index_[{boards_[i].node, boards_[i].board}] = i;
  }
  const std::vector<BoardCapacity>& boards() const { return boards_; }

  // sign 1: the job's tasks take their room; -1: they give it back.
  void Apply(const SchedJob& job, int sign) {
    const v1::Resources& r = *job.resources;
    for (const TaskPlacement& t : job.tasks) {
      auto it = index_.find({t.node, t.board});
      if (it == index_.end()) continue;  // a board that is down: nothing to free there
      BoardCapacity& b = boards_[it->second];
      if (b.units > 0) {
        b.units_free = sign > 0 ? b.units_free - std::min(b.units_free, t.count)
                                : std::min(b.units, b.units_free + t.count);
        continue;
      }
      if (!b.grid) continue;
      auto grid = std::make_shared<CoreGrid>(*b.grid);
      if (sign > 0) {
        grid->Occupy(t.rect);
      } else {
        grid->Release(t.rect);
      }
      b.grid = std::move(grid);
      b.own.reset();
      b.mers.reset();
      b.max_mer_area = 0;
      auto move = [sign](uint32_t& free, uint32_t total, uint32_t amount) {
        free = sign > 0 ? free - std::min(free, amount) : std::min(total, free + amount);
      };
      move(b.ksps_free, b.ksps_total, r.ksps());
      move(b.streams_free, b.streams_total, r.streams());
    }
  }

 private:
  std::vector<BoardCapacity> boards_;
  std::map<std::pair<std::string, uint32_t>, size_t> index_;
};

// For core-hour limits: the core-time that ended within each limited user's and tenant's window
// (the input's), and what the plan's jobs use as they end, which stays in the window for the
// plan: the plan never starts a job earlier than a limit lets it.
class CoreTimeInPlan {
 public:
  CoreTimeInPlan(const SchedulerPolicy& policy, const SchedulerInput& input)
      : policy_(policy), from_ms_(input.now_ms) {
    if (!limits()) return;
    ended_ = std::make_shared<EndedCoreTime>(input.ended ? *input.ended : EndedCoreTime{});
  }
  bool limits() const {
    return policy_.user_core_hours.core_ms > 0 || !policy_.tenant_core_hours.empty();
  }
  std::shared_ptr<const EndedCoreTime> ended() const { return ended_; }
  // `job` ends at `end_ms` in the plan: what it used within each window counts from then on.
  void Ended(const SchedJob& job, int64_t end_ms) {
    if (ended_ == nullptr) return;
    auto used = [&](int64_t window_ms) {
      const int64_t from = std::max(job.start_ms, from_ms_ - window_ms);
      return static_cast<double>(job.cores()) *
             static_cast<double>(std::max<int64_t>(0, end_ms - from));
    };
    if (policy_.user_core_hours.core_ms > 0) {
      ended_->users[job.user] += used(policy_.user_core_hours.window_ms);
    }
    if (auto t = policy_.tenant_core_hours.find(job.tenant); t != policy_.tenant_core_hours.end()) {
      ended_->tenants[job.tenant] += used(t->second.window_ms);
    }
  }

 private:
  const SchedulerPolicy& policy_;
  const int64_t from_ms_;  // the plan's start
  std::shared_ptr<EndedCoreTime> ended_;
};

}  // namespace

std::string BasisName(StartForecast::Basis basis) {
  switch (basis) {
    case StartForecast::Basis::kPlan:
      return "plan";
    case StartForecast::Basis::kHeld:
      return "held";
    case StartForecast::Basis::kLimited:
      return "limit";
    case StartForecast::Basis::kNever:
      return "none";
    case StartForecast::Basis::kBeyondLimit:
      return "beyond";
  }
  return "?";
}

namespace {

// Each pending job's forecast as far as it is known before the plan: beyond the limit, held,
// or held back by a core-hour limit now; the others (returned, the jobs the plan runs on) never
// start until the plan starts them. `slot`: each job's index in `out`.
std::vector<PendingJob> PlanOn(const SchedulerInput& input, const SchedulerPolicy& policy,
                               const ForecastLimits& limits, bool core_limits,
                               std::vector<StartForecast>& out,
                               std::unordered_map<uint64_t, size_t>& slot) {
  std::vector<PendingJob> pending;
  WindowLimits limited_now(policy, input);
  for (size_t i = 0; i < input.pending.size(); ++i) {
    const PendingJob& p = input.pending[i];
    out[i].job_id = p.id;
    slot[p.id] = i;
    const bool held = p.hold != nullptr || policy.held_tenants.count(*p.tenant) > 0;
    if (i >= limits.max_jobs) {
      out[i].basis = StartForecast::Basis::kBeyondLimit;
    } else if (held) {
      out[i].basis = StartForecast::Basis::kHeld;
    } else if (core_limits && limited_now.Blocks(p) != nullptr) {
      out[i].basis = StartForecast::Basis::kLimited;
    } else {
      out[i].basis = StartForecast::Basis::kNever;  // until the plan starts it
      pending.push_back(p);
    }
  }
  return pending;
}

// The jobs the plan did not start: held back by a core-hour limit where the plan ends (the
// plan's own jobs may have used its room), or beyond what the plan looked at.
void SayWhyUnplanned(const SchedulerPolicy& policy, const std::vector<RunningJob>& running,
                     int64_t now, CoreTimeInPlan& core_time, bool nothing_ends,
                     const std::vector<PendingJob>& pending,
                     std::unordered_map<uint64_t, size_t>& slot, std::vector<StartForecast>& out) {
  SchedulerInput last;
  last.running = running;
  last.now_ms = now;
  last.ended = core_time.ended();
  WindowLimits limited_last(policy, last);
  for (const PendingJob& p : pending) {
    if (core_time.limits() && limited_last.Blocks(p) != nullptr) {
      out[slot[p.id]].basis = StartForecast::Basis::kLimited;
    } else if (!nothing_ends) {  // the plan stopped looking before these started
      out[slot[p.id]].basis = StartForecast::Basis::kBeyondLimit;
    }
  }
}

}  // namespace

std::vector<StartForecast> ForecastStarts(const SchedulerInput& input,
                                          const SchedulerPolicy& policy,
                                          const ForecastLimits& limits) {
  std::vector<StartForecast> out(input.pending.size());
  std::unordered_map<uint64_t, size_t> slot;
  // Core-hour limits: what ended in their windows, and (below) what the plan's jobs use.
  CoreTimeInPlan core_time(policy, input);
  std::vector<PendingJob> pending = PlanOn(input, policy, limits, core_time.limits(), out, slot);
  SchedulerPolicy plan_policy = policy;
  plan_policy.explain = false;
  plan_policy.preemption = false;
  plan_policy.grow = false;
  ForecastBoards boards(input.boards);
  // The running jobs, and those the plan starts (kept here: the passes point at them).
  std::deque<SchedJob> started;
  std::vector<RunningJob> running(input.running.begin(), input.running.end());
  using End = std::pair<int64_t, const SchedJob*>;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends;
  // When a job ends: predicted (by its run so far), or at its limit, never before now.
  auto expected_end = [&](const SchedJob& job, int64_t limit_end_ms) {
    int64_t end = limit_end_ms;
    if (limits.expected_run_ms) {
      end =
          PredictedEnd(job.start_ms, limits.expected_run_ms(job), job.time_limit_ms, input.now_ms);
    }
    return std::max(input.now_ms, end);
  };
  for (const RunningJob& r : running) ends.emplace(expected_end(*r.job, r.limit_end_ms), r.job);
  // The running jobs' use (quotas, account trees), kept as jobs start and end, so that no pass
  // adds up every running job again.
  const bool track_use = !policy.tenant_quotas.empty() || !policy.queue_quotas.empty() ||
                         policy.quota_trees != nullptr;
  QuotaUse use;
  if (input.use != nullptr) {
    use = *input.use;
  } else if (track_use) {
    for (const RunningJob& r : running) use.Add(*r.job, r.job->cores(), 1);
  }
  int64_t now = input.now_ms;
  bool target_done = false, nothing_ends = false;
  for (size_t step = 0; step < limits.max_steps && !pending.empty() && !target_done; ++step) {
    SchedulerInput in;
    in.pending = pending;
    in.running = running;
    in.boards = boards.boards();
    in.now_ms = now;
    in.use = &use;
    in.ended = core_time.ended();
    SchedulePlan plan = PlanPass(std::move(in), plan_policy);
    if (!plan.starts.empty()) {
      std::unordered_set<uint64_t> gone;
      for (const StartDecision& s : plan.starts) {
        auto at = slot.find(s.job_id);
        if (at == slot.end()) continue;
        const PendingJob& p = input.pending[at->second];
        StartForecast& f = out[at->second];
        f.start_ms = now;
        f.basis = StartForecast::Basis::kPlan;
        f.backfilled = s.backfilled;
        SchedJob& job = started.emplace_back(*p.job);
        job.start_ms = now;
        job.tasks = s.tasks;
        boards.Apply(job, 1);
        if (track_use) use.Add(job, job.cores(), 1);
        running.push_back(RunningJob::Of(job));
        ends.emplace(expected_end(job, now + std::max<int64_t>(0, job.time_limit_ms)), &job);
        gone.insert(s.job_id);
        target_done |= s.job_id == limits.until_job;
      }
      std::erase_if(pending, [&](const PendingJob& p) { return gone.count(p.id) > 0; });
    }
    if (ends.empty()) {  // nothing left to end: what waits now waits for ever
      nothing_ends = true;
      break;
    }
    // The next time a job reaches its limit: everything ending then gives its room back.
    now = std::max(now, ends.top().first);
    std::unordered_set<const SchedJob*> ended;
    while (!ends.empty() && ends.top().first <= now) {
      boards.Apply(*ends.top().second, -1);
      if (track_use) use.Add(*ends.top().second, ends.top().second->cores(), -1);
      core_time.Ended(*ends.top().second, now);
      ended.insert(ends.top().second);
      ends.pop();
    }
    std::erase_if(running, [&](const RunningJob& r) { return ended.count(r.job) > 0; });
  }
  SayWhyUnplanned(policy, running, now, core_time, nothing_ends, pending, slot, out);
  return out;
}

}  // namespace snn
