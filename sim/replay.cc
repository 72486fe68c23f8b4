#include "sim/replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <queue>
#include <random>

#include "common/base/job_validation.h"
#include "master/sched/policy_config.h"
#include "master/sched/runtime_prediction.h"
#include "master/sched/start_forecast.h"

namespace snn {
namespace {

constexpr int64_t kMs = 1000;

struct SimJob {
  SchedJob sched;
  PendingJob pending;  // the pass's view of it, made once
  v1::Resources resources;
  const TraceJob* trace = nullptr;
  int64_t start_s = -1;
  int64_t forecast_s = -1, reservation_only_s = -1;
  uint32_t tenant_index = 0;  // dense, for per-event caches
};

class Replayer {
 public:
  Replayer(const Trace& trace, const ReplayOptions& options)
      : trace_(trace),
        options_(options),
        policy_(PolicyFor(options.policy, options.whole_queue_each_pass)),
        ledger_(options.fairshare_half_life_s * kMs) {
    if (options.backfill_age_first_after_ms >= 0) {
      policy_.backfill_age_first_after_ms = options.backfill_age_first_after_ms;
    }
    accrual_.set_per_tenant(
        options.accrue_per_user.value_or(DefaultSchedulingConfig().priority().accrue_per_tenant()));
    if (options.policy == SimPolicy::kDefault && options.backfill_shortest_first) {
      policy_.backfill_shortest_first = *options.backfill_shortest_first;
    }
    if (options.policy == SimPolicy::kDefault && options.backfill_past_reservation_by_priority) {
      policy_.backfill_past_reservation_by_priority =
          *options.backfill_past_reservation_by_priority;
    }
  }

  Result<std::vector<JobOutcome>> Run();

 private:
  void BuildBoards();
  void Schedule(int64_t now_s);
  void Candidates(int64_t now_s);
  void Rank(int64_t now_s);
  void ChargeFairShare(int64_t now_s);
  void Key(int64_t now_s, bool update_accrual);
  // The forecasts, at their submit, of the jobs from `first` on that did not start then.
  void Forecast(int64_t now_s, size_t first, size_t end);
  SchedulerInput PassInput(int64_t now_s, std::vector<RunningJob>& running,
                           bool with_running) const;
  size_t BoardIndex(const std::string& node) const { return std::stoul(node.substr(1)); }
  Status CheckReservations() const;
  int64_t NextOpening(int64_t now_s) const;

  const Trace& trace_;
  const ReplayOptions options_;
  const bool mesh_ = options_.mesh_width > 0;  // else one-core boards, counted
  SchedulerPolicy policy_;
  FairShareLedger ledger_;
  AccrualLimit accrual_;
  std::vector<AccrualLimit::PendingJob> accrual_jobs_;  // reused
  std::vector<SimJob> jobs_;
  std::vector<BoardCapacity> boards_;
  std::vector<std::shared_ptr<CoreGrid>> grids_;
  std::vector<SimJob*> pending_;  // submit order
  struct Keyed {
    int64_t wait_ms;
    double priority;
    uint64_t id;
    SimJob* job;
  };
  bool GoesFirst(const Keyed& a, const Keyed& b) const {
    return snn::GoesFirst(a.wait_ms, a.priority, a.id, b.wait_ms, b.priority, b.id,
                          options_.weights);
  }
  std::vector<Keyed> keyed_;         // the default policy's, each event
  std::vector<SimJob*> candidates_;  // each event's, in the policy's order
  std::vector<SimJob*> running_;
  std::priority_queue<std::pair<int64_t, size_t>, std::vector<std::pair<int64_t, size_t>>,
                      std::greater<>>
      ends_;  // (end s, job index)
  uint64_t pool_cores_ = 0;
  uint64_t free_cores_ = 0;
  int64_t charged_to_s_ = 0;
  std::vector<std::pair<uint64_t, double>> share_;  // by tenant index: (event, usage share)
  uint64_t share_epoch_ = 0;
  std::vector<FairShareLedger::Account> accounts_;  // by tenant index, once charged
  std::vector<RuntimeHistory> history_;  // by tenant index: the forecasts' run-time predictions
  const std::string pool_name_ = "default";
  int64_t last_event_s_ = INT64_MIN;
};

// A maintenance reservation of the replay as the closure the scheduler checks (in ms).
BoardClosure MaintenanceClosure(const SimReservation& r) {
  return BoardClosure{"maintenance", r.start_s * kMs, (r.start_s + r.duration_s) * kMs,
                      r.period_s * kMs};
}

// Closes `b` by `c` too. Lists are shared between passes, so a new one replaces the old.
void AddClosure(BoardCapacity& b, const BoardClosure& c) {
  auto list =
      b.closures ? std::make_shared<BoardClosures>(*b.closures) : std::make_shared<BoardClosures>();
  list->push_back(c);
  b.closures = std::move(list);
}

void Replayer::BuildBoards() {
  if (!mesh_) {  // MaxProcs one-core boards: one class, counted (BoardCapacity::units)
    BoardCapacity b;
    b.node = "units";
    b.type = "sim";
    b.pools = {pool_name_};
    b.largest_live = Rect{0, 0, 1, 1};
    b.units = b.units_free = trace_.max_procs;
    for (const SimReservation& r : options_.reservations) {  // each closes the whole class
      AddClosure(b, MaintenanceClosure(r));
    }
    boards_.push_back(std::move(b));
    pool_cores_ = free_cores_ = trace_.max_procs;
    return;
  }
  const uint32_t per_board = options_.mesh_width * options_.mesh_height;
  const uint32_t count = (trace_.max_procs + per_board - 1) / per_board;
  for (uint32_t i = 0; i < count; ++i) {
    auto grid = std::make_shared<CoreGrid>(options_.mesh_width, options_.mesh_height);
    BoardCapacity b;
    b.node = "b" + std::to_string(i);
    b.type = "sim";
    b.pools = {pool_name_};
    b.largest_live = Rect{0, 0, grid->width(), grid->height()};
    b.grid = grid;
    grids_.push_back(grid);
    boards_.push_back(std::move(b));
  }
  pool_cores_ = uint64_t{count} * per_board;
  free_cores_ = pool_cores_;
  for (const SimReservation& r : options_.reservations) {
    for (uint32_t i = 0; i < count; ++i) {
      if (r.boards.empty() || std::find(r.boards.begin(), r.boards.end(), i) != r.boards.end()) {
        AddClosure(boards_[i], MaintenanceClosure(r));
      }
    }
  }
}

Status Replayer::CheckReservations() const {
  if (options_.reservations.empty()) return Status::Ok();
  for (const SimReservation& r : options_.reservations) {
    if (!mesh_ && !r.boards.empty()) {
      return InvalidArgument(
          "one-core boards are counted, not placed: a reservation closes all of them or none "
          "(replay with --mesh to close some)");
    }
  }
  // Each job must fit between the windows of some board (all of them together: two windows
  // that each leave room may leave none between them).
  for (const TraceJob& t : trace_.jobs) {
    const bool fits = std::any_of(boards_.begin(), boards_.end(), [&](const BoardCapacity& b) {
      return !b.closures ||
             FirstOpenStart(*b.closures, t.submit_s * kMs, t.estimate_s * kMs) != INT64_MAX;
    });
    if (!fits) {
      return InvalidArgument("job " + std::to_string(t.id) + " asks for " +
                             std::to_string(t.estimate_s) +
                             " s, more than any board is ever open between the reservations' "
                             "windows: it could never run");
    }
  }
  return Status::Ok();
}

// The end of the first window after `now_s` on any board (INT64_MAX: none): boards open again.
int64_t Replayer::NextOpening(int64_t now_s) const {
  int64_t next = INT64_MAX;
  for (const SimReservation& r : options_.reservations) {
    const BoardClosure c{"", r.start_s, r.start_s + r.duration_s, r.period_s};
    int64_t s = 0, e = 0;
    if (c.OccurrenceAfter(now_s, &s, &e)) next = std::min(next, e);
  }
  return next;
}

// The jobs this event's pass is given, in the policy's order (submit order for FCFS and EASY,
// multifactor priority for the default), leaving out every job that cannot start in it: the pass
// starts jobs in order while they fit, the first that does not holds the reservation (or, under
// FCFS, blocks), and after it only a job no larger than the cores still free can start. The plan
// is the same as with every pending job; the cost of a pass follows the jobs that fit, not the
// length of the queue. With a mesh, a job that fits in count may not fit in shape, so only the
// cores free before the pass bound it.
void Replayer::Candidates(int64_t now_s) {
  candidates_.clear();
  uint64_t left = free_cores_;
  bool blocked = false;
  // Takes the next job in order; false once no later job can start.
  // One-core boards with windows: a job whose run meets one does not start, whatever its count.
  const BoardClosures* closures = mesh_ ? nullptr : boards_[0].closures.get();
  auto take_in_order = [&](SimJob* j) {
    candidates_.push_back(j);
    const uint64_t procs = j->trace->procs;
    const bool closed =
        closures && AnyMeets(*closures, now_s * kMs, now_s * kMs + j->sched.time_limit_ms);
    if (procs <= left && !closed) {
      if (!mesh_) left -= procs;
      return true;
    }
    blocked = true;
    return policy_.backfill;
  };
  if (options_.policy != SimPolicy::kDefault) {
    if (options_.whole_queue_each_pass) {
      candidates_ = pending_;
      return;
    }
    for (SimJob* j : pending_) {
      if (!blocked) {
        if (!take_in_order(j)) return;
      } else if (j->trace->procs <= left) {
        candidates_.push_back(j);
      }
    }
    return;
  }
  Rank(now_s);
  if (options_.whole_queue_each_pass) {
    std::sort(keyed_.begin(), keyed_.end(),
              [this](const Keyed& a, const Keyed& b) { return GoesFirst(a, b); });
    for (const Keyed& k : keyed_) candidates_.push_back(k.job);
    return;
  }
  // The head in order, popped from a heap until the first job that does not fit; then the rest
  // that could still fit, sorted.
  auto after = [this](const Keyed& a, const Keyed& b) { return GoesFirst(b, a); };
  std::make_heap(keyed_.begin(), keyed_.end(), after);
  while (!keyed_.empty() && !blocked) {
    std::pop_heap(keyed_.begin(), keyed_.end(), after);
    SimJob* j = keyed_.back().job;
    keyed_.pop_back();
    if (!take_in_order(j)) return;
  }
  if (!blocked) return;
  keyed_.erase(std::remove_if(keyed_.begin(), keyed_.end(),
                              [left](const Keyed& k) { return k.job->trace->procs > left; }),
               keyed_.end());
  std::sort(keyed_.begin(), keyed_.end(),
            [&after](const Keyed& a, const Keyed& b) { return after(b, a); });
  for (const Keyed& k : keyed_) candidates_.push_back(k.job);
}

// The default policy's keys for every pending job: multifactor priority, with fair share
// charged for the running jobs' use since the last event.
void Replayer::Rank(int64_t now_s) {
  ChargeFairShare(now_s);
  Key(now_s, /*update_accrual=*/true);
}

void Replayer::ChargeFairShare(int64_t now_s) {
  for (SimJob* j : running_) {
    FairShareLedger::Account& account = accounts_[j->tenant_index];
    if (account == nullptr) account = ledger_.AccountOf(j->sched.tenant);
    ledger_.Charge(account, static_cast<double>(j->trace->procs) *
                                static_cast<double>(now_s - std::max(j->start_s, charged_to_s_)) *
                                kMs);
  }
  charged_to_s_ = now_s;
  ledger_.AdvanceTo(now_s * kMs);
}

void Replayer::Key(int64_t now_s, bool update_accrual) {
  const double total = ledger_.total();
  const double users = std::max<double>(1, static_cast<double>(ledger_.tenants()));
  keyed_.clear();
  keyed_.reserve(pending_.size());
  ++share_epoch_;  // each tenant's share, looked up once an event
  if (accrual_.on() && update_accrual) {
    accrual_jobs_.clear();
    for (const SimJob* j : pending_) {
      accrual_jobs_.push_back({j->tenant_index, j->sched.submit_ms, j->sched.id});
    }
    accrual_.Update(accrual_jobs_, now_s * kMs);
  }
  for (SimJob* j : pending_) {
    auto& [epoch, tenant_share] = share_[j->tenant_index];
    if (epoch != share_epoch_) {
      epoch = share_epoch_;
      tenant_share = total > 0 ? ledger_.usage(j->sched.tenant) / total : 0;
    }
    PriorityInputs in;
    in.wait_ms = accrual_.CountedWait(j->sched.id, j->sched.submit_ms, now_s * kMs);
    in.cores = j->trace->procs;
    in.pool_cores = pool_cores_;
    in.tenant_usage_share = tenant_share;
    in.tenant_weight_share = 1.0 / users;
    // The slowdown factor on the run time the user's last two jobs predict, as the master's.
    in.time_limit_ms = options_.slowdown_from_limits
                           ? j->sched.time_limit_ms
                           : history_[j->tenant_index].Predict(j->sched.time_limit_ms);
    const double total = ComputePriority(in, options_.weights).total;
    // The pass reads them when it orders backfill candidates, as the master's queue order sets.
    j->pending.priority = total;
    j->pending.starving =
        options_.weights.starve_after_ms > 0 && in.wait_ms > options_.weights.starve_after_ms;
    keyed_.push_back(Keyed{in.wait_ms, total, j->sched.id, j});
  }
}

SchedulerInput Replayer::PassInput(int64_t now_s, std::vector<RunningJob>& running,
                                   bool with_running) const {
  SchedulerInput in;
  in.now_ms = now_s * kMs;
  in.boards = boards_;
  if (in.boards.size() == 1 && in.boards[0].units > 0) in.boards[0].units_free = free_cores_;
  if (with_running) {
    running.reserve(running_.size());
    for (SimJob* j : running_) running.push_back(RunningJob::Of(j->sched));
  }
  in.running = running;
  return in;
}

void Replayer::Forecast(int64_t now_s, size_t first, size_t end) {
  std::vector<SimJob*> order;
  for (size_t i = first; i < end; ++i) {
    SimJob& j = jobs_[i];
    if (j.start_s >= 0 || i % options_.forecast_every != 0) continue;
    if (order.empty()) {  // the queue in the policy's order, once
      if (options_.policy == SimPolicy::kDefault) {
        // The keys as they are: charging fair share or accruing here would change the replay.
        Key(now_s, /*update_accrual=*/false);
        std::sort(keyed_.begin(), keyed_.end(),
                  [this](const Keyed& a, const Keyed& b) { return GoesFirst(a, b); });
        for (const Keyed& k : keyed_) order.push_back(k.job);
      } else {
        order = pending_;
      }
    }
    std::vector<RunningJob> running;
    SchedulerInput in = PassInput(now_s, running, true);
    for (const SimJob* p : order) {
      in.pending.push_back(p->pending);
      if (p == &j) break;  // those after it cannot delay it
    }
    ForecastLimits limits;
    limits.max_jobs = SIZE_MAX;
    limits.max_steps = SIZE_MAX;
    limits.until_job = j.sched.id;
    limits.expected_run_ms = [this](const SchedJob& job) {
      const SimJob& sim = jobs_[job.id];
      return history_[sim.tenant_index].Predict(sim.sched.time_limit_ms);
    };
    const StartForecast f = ForecastStarts(in, policy_, limits).back();
    if (f.basis == StartForecast::Basis::kPlan) j.forecast_s = f.start_ms / kMs;
    in.pending = {j.pending};
    limits.expected_run_ms = nullptr;  // a reservation is made from time limits
    const StartForecast alone = ForecastStarts(in, policy_, limits).back();
    if (alone.basis == StartForecast::Basis::kPlan) j.reservation_only_s = alone.start_ms / kMs;
  }
}

void Replayer::Schedule(int64_t now_s) {
  // No free core: nothing can start under any policy (the simulator never preempts).
  if (pending_.empty() || free_cores_ == 0) return;
  Candidates(now_s);
  std::vector<RunningJob> running;
  // First come, first served looks not at the running jobs (no reservation).
  SchedulerInput in = PassInput(now_s, running, policy_.backfill);
  in.pending.reserve(candidates_.size());
  for (const SimJob* candidate : candidates_) in.pending.push_back(candidate->pending);
  SchedulePlan plan = PlanPass(std::move(in), policy_);
  if (plan.starts.empty()) return;
  for (const StartDecision& start : plan.starts) {
    SimJob& job = jobs_[start.job_id];
    job.start_s = now_s;
    job.sched.start_ms = now_s * kMs;
    job.sched.tasks = start.tasks;
    for (const TaskPlacement& t : start.tasks) {
      if (mesh_) grids_[BoardIndex(t.node)]->Occupy(t.rect);
      free_cores_ -= mesh_ ? t.rect.area() : t.count;
    }
    running_.push_back(&job);
    ends_.emplace(now_s + job.trace->run_s, start.job_id);
  }
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [](const SimJob* j) { return j->start_s >= 0; }),
                 pending_.end());
}

Result<std::vector<JobOutcome>> Replayer::Run() {
  BuildBoards();
  SNN_RETURN_IF_ERROR(CheckReservations());
  jobs_.resize(trace_.jobs.size());
  std::map<int64_t, uint32_t> tenant_index;
  for (size_t i = 0; i < trace_.jobs.size(); ++i) {
    const TraceJob& t = trace_.jobs[i];
    SimJob& j = jobs_[i];
    j.trace = &t;
    j.resources.set_cores(mesh_ ? t.procs : 1);
    if (mesh_ && t.procs > options_.mesh_width * options_.mesh_height) {
      return InvalidArgument("job " + std::to_string(t.id) + " needs " + std::to_string(t.procs) +
                             " cores, more than one " + std::to_string(options_.mesh_width) + "x" +
                             std::to_string(options_.mesh_height) + " board has");
    }
    j.sched.id = i;
    j.sched.pool = pool_name_;
    j.sched.tenant = "u" + std::to_string(t.user);
    j.tenant_index = tenant_index.try_emplace(t.user, tenant_index.size()).first->second;
    j.sched.queue = "default";
    j.sched.resources = &j.resources;
    j.sched.replicas = mesh_ ? 1 : t.procs;
    j.sched.submit_ms = t.submit_s * kMs;
    j.sched.time_limit_ms = t.estimate_s * kMs;
    j.pending = PendingJob::Of(j.sched);
    j.pending.pool = &pool_name_;  // one pool: one pointer, as the master interns names
  }
  share_.assign(tenant_index.size(), {0, 0.0});
  accounts_.assign(tenant_index.size(), nullptr);
  history_.assign(tenant_index.size(), RuntimeHistory{});
  size_t next = 0;
  // Jobs that wait only for a window to close wait for its end (each fits between windows).
  while (next < jobs_.size() || !ends_.empty() ||
         (!pending_.empty() && !options_.reservations.empty())) {
    int64_t now = INT64_MAX;
    if (next < jobs_.size()) now = jobs_[next].trace->submit_s;
    if (!ends_.empty()) now = std::min(now, ends_.top().first);
    // Boards a window closed open again: what waits may start then.
    if (!pending_.empty() && !options_.reservations.empty()) {
      now = std::min(now, NextOpening(last_event_s_));
    }
    last_event_s_ = now;
    while (!ends_.empty() && ends_.top().first == now) {
      SimJob& job = jobs_[ends_.top().second];
      ends_.pop();
      for (const TaskPlacement& t : job.sched.tasks) {
        if (mesh_) grids_[BoardIndex(t.node)]->Release(t.rect);
        free_cores_ += mesh_ ? t.rect.area() : t.count;
      }
      running_.erase(std::find(running_.begin(), running_.end(), &job));
      history_[job.tenant_index].Record(job.trace->run_s * kMs);
    }
    const size_t arrived = next;
    while (next < jobs_.size() && jobs_[next].trace->submit_s == now)
      pending_.push_back(&jobs_[next++]);
    Schedule(now);
    if (options_.forecast_every > 0 && arrived < next) Forecast(now, arrived, next);
  }
  std::vector<JobOutcome> out;
  for (const SimJob& j : jobs_) {
    out.push_back(JobOutcome{j.trace->id,
                             j.trace->submit_s,
                             j.start_s,
                             j.trace->run_s,
                             j.trace->procs,
                             j.trace->user,
                             j.forecast_s,
                             j.reservation_only_s,
                             {}});
    if (mesh_) {
      for (const TaskPlacement& t : j.sched.tasks) {
        out.back().boards.push_back(static_cast<uint32_t>(BoardIndex(t.node)));
      }
    }
  }
  return out;
}

}  // namespace

// The master's own defaults (master/sched/policy_config.cc), so that the simulator replays the
// policy the master runs.
PriorityWeights DefaultWeights() {
  PriorityWeights w = ToWeights(DefaultSchedulingConfig());
  w.queue = 0;  // the trace has no queues or job priorities
  w.job = 0;
  return w;
}

SchedulerPolicy PolicyFor(SimPolicy policy, bool explain) {
  SchedulerPolicy p;
  if (policy == SimPolicy::kDefault) p = ToSchedulerPolicy(DefaultSchedulingConfig());
  p.explain = explain;
  p.preemption = false;  // a trace has no tiers to preempt by
  p.backfill = policy != SimPolicy::kFcfs;
  p.textbook_easy = policy == SimPolicy::kEasy;  // the literature's, as the references replay it
  return p;
}

Result<std::vector<JobOutcome>> Replay(const Trace& trace, const ReplayOptions& options) {
  Replayer r(trace, options);
  return r.Run();
}

void ShakeTrace(Trace& trace, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> pick(0, 1);
  std::uniform_int_distribution<int64_t> move(-300, 300);
  for (TraceJob& j : trace.jobs) {
    if (pick(random) < 0.1) j.submit_s = std::max<int64_t>(0, j.submit_s + move(random));
  }
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
}

}  // namespace snn
