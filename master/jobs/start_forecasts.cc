// SchedulingDriver::StartForecasts: the start forecast over the master's live state.
#include "master/jobs/scheduling_driver.h"

namespace snn {

std::shared_ptr<const SchedulingDriver::Forecasts> SchedulingDriver::StartForecasts() {
  const std::pair<uint64_t, size_t> key{full_passes_, jobs_.views().pending().size()};
  if (forecasts_ != nullptr && forecasts_key_ == key) return forecasts_;
  constexpr size_t kForecastJobs = 1000;
  auto out = std::make_shared<Forecasts>();
  std::vector<BoardCapacity> boards = SchedulableBoards(true);
  // With no board up, or before the first full pass orders the queue, there is no plan yet.
  if (!boards.empty() && order_.has_order()) {
    SchedulerInput in =
        CollectPassInput(jobs_, order_, std::move(boards), clock_.NowMs(), kForecastJobs);
    ForecastLimits limits;
    limits.max_jobs = kForecastJobs;
    limits.expected_run_ms = [this](const SchedJob& job) {
      const v1::JobRecord* record = jobs_.Find(job.id);
      const RuntimeHistory* history =
          record == nullptr ? nullptr : jobs_.RunTimesOf(record->spec().user());
      return history == nullptr ? job.time_limit_ms : history->Predict(job.time_limit_ms);
    };
    for (const StartForecast& f : ForecastStarts(in, policy_, limits)) (*out)[f.job_id] = f;
  }
  forecasts_ = std::move(out);
  forecasts_key_ = key;
  return forecasts_;
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
