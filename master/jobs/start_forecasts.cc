// SchedulingDriver::StartForecasts: the start forecast over the master's live state, worked out
// on a copy of it, away from the io thread.
#include <deque>

#include "master/jobs/scheduling_driver.h"

namespace snn {
namespace {

constexpr size_t kForecastJobs = 1000;

// Everything a forecast reads, copied: the worker thread shares nothing with the io thread but
// the boards' core maps, which are never changed once published (copy on write).
struct ForecastState {
  std::deque<v1::Resources> resources;
  std::deque<SchedJob> jobs;
  SchedulerInput input;
  std::vector<RunningJob> running;
  SchedulerPolicy policy;
  std::unordered_map<uint64_t, int64_t> expected_run_ms;  // by job id
  ReservationBook::Holds holds;                           // waits for reservations

  SchedJob& Copy(const SchedJob& job) {
    SchedJob& copy = jobs.emplace_back(job);
    copy.resources = &resources.emplace_back(*job.resources);
    return copy;
  }
};

std::shared_ptr<const SchedulingDriver::Forecasts> Work(const ForecastState& state) {
  ForecastLimits limits;
  limits.max_jobs = kForecastJobs;
  limits.expected_run_ms = [&state](const SchedJob& job) {
    auto it = state.expected_run_ms.find(job.id);
    return it == state.expected_run_ms.end() ? job.time_limit_ms : it->second;
  };
  auto out = std::make_shared<SchedulingDriver::Forecasts>();
  for (const StartForecast& f : ForecastStarts(state.input, state.policy, limits)) {
    (*out)[f.job_id] = f;
  }
  return out;
}

}  // namespace

void SchedulingDriver::set_post_to_io(ForecastWorker::Post post) {
  forecast_worker_ = std::make_unique<ForecastWorker>(std::move(post));
}

void SchedulingDriver::StartForecasts(std::function<void(std::shared_ptr<const Forecasts>)> done) {
  const std::pair<uint64_t, size_t> key{full_passes_, jobs_.views().pending().size()};
  if (forecasts_ != nullptr && forecasts_key_ == key) return done(forecasts_);
  forecast_waiters_.push_back(std::move(done));
  if (forecast_waiters_.size() > 1) return;  // one is being worked out: it answers this too
  auto state = std::make_shared<ForecastState>();
  std::vector<BoardCapacity> boards = SchedulableBoards(true);
  // With no board up, or before the first full pass orders the queue, there is no plan yet.
  if (!boards.empty() && order_.has_order()) {
    SchedulerInput live =
        CollectPassInput(jobs_, order_, std::move(boards), clock_.NowMs(), kForecastJobs);
    auto predict = [this, &state](const SchedJob& job) {
      const v1::JobRecord* record = jobs_.Find(job.id);
      if (record == nullptr) return;
      if (int64_t ms = jobs_.PredictRunMs(record->spec().user(), job.time_limit_ms); ms > 0) {
        state->expected_run_ms[job.id] = ms;
      }
    };
    state->input.now_ms = live.now_ms;
    state->input.boards = std::move(live.boards);
    state->input.ended = usage_.window().Ended(live.now_ms);  // immutable: shared with the worker
    for (const PendingJob& p : live.pending) {
      SchedJob& job = state->Copy(*p.job);
      PendingJob copy = p;
      copy.job = &job;
      copy.pool = &job.pool;
      copy.tenant = &job.tenant;
      copy.queue = &job.queue;
      copy.user = &job.user;
      copy.board_type = &job.resources->board_type();
      copy.hold = job.hold ? &job.hold : nullptr;
      copy.reservation = job.reservation.empty() ? nullptr : &job.reservation;
      state->input.pending.push_back(copy);
      predict(job);
    }
    for (const RunningJob& r : live.running) {
      SchedJob& job = state->Copy(*r.job);
      RunningJob copy = r;
      copy.job = &job;
      copy.pool = &job.pool;
      state->running.push_back(copy);
      predict(job);
    }
    state->input.running = state->running;
    reservations_.Apply(state->input, state->holds);
    state->policy = policy_;
  }
  auto finish = [this, key](std::shared_ptr<const Forecasts> forecasts) {
    forecasts_ = std::move(forecasts);
    forecasts_key_ = key;
    for (auto& waiter : std::exchange(forecast_waiters_, {})) waiter(forecasts_);
  };
  if (forecast_worker_ == nullptr) return finish(Work(*state));
  forecast_worker_->Run([state, finish]() -> std::function<void()> {
    auto forecasts = Work(*state);
    return [finish, forecasts] { finish(forecasts); };
  });
}

void SchedulingDriver::ShowForecast(const Forecasts& forecasts, v1::JobRecord& shown) {
  if (shown.state() != v1::PENDING) return;
  auto it = forecasts.find(shown.id());
  if (it == forecasts.end()) {  // further back than the forecast looks, or no plan yet
    shown.set_forecast_basis(forecasts.empty() ? "none" : "beyond");
    return;
  }
  const StartForecast& f = it->second;
  if (f.basis == StartForecast::Basis::kPlan) {
    shown.set_forecast_start_ms(f.start_ms);
    shown.set_forecast_basis(f.backfilled ? "backfill" : "plan");
    return;
  }
  shown.set_forecast_basis(BasisName(f.basis));
}

}  // namespace snn
