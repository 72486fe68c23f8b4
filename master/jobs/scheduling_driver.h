// Drives the pure scheduler (master/sched/) over the master's live state: the policy in force,
// the boards a pass may use and those admission judges a job by, the pass itself (order, plan,
// then the starts, preemptions, growths and shrinks applied, and the wait reasons kept), and the
// reason a pending job gives. Starts reserve cores and have tasks launched once durable.
// Thread contract: only on the master's io thread. Time comes from the injected Clock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/base/clock.h"
#include "master/jobs/admission.h"
#include "master/jobs/forecast_worker.h"
#include "master/jobs/job_table.h"
#include "master/jobs/job_writer.h"
#include "master/jobs/pass_jobs.h"
#include "master/jobs/reservation_book.h"
#include "master/jobs/task_dispatch.h"
#include "master/jobs/usage_recorder.h"
#include "master/metrics/master_metrics.h"
#include "master/nodes/node_registry.h"
#include "master/sched/policy_config.h"
#include "master/sched/queue_order.h"
#include "master/sched/scheduler.h"
#include "master/sched/start_forecast.h"

namespace snn {

class SchedulingDriver {
 public:
  SchedulingDriver(JobTable& jobs, NodeRegistry& nodes, Journal& journal, JobWriter& writer,
                   TaskDispatch& dispatch, UsageRecorder& usage, const Clock& clock,
                   AdmissionLimits admission, std::function<void()> request_schedule);

  // The scheduling policy in force; a new one applies from the next pass.
  const v1::SchedulingConfig& scheduling() const { return scheduling_; }
  void SetScheduling(const v1::SchedulingConfig& config);
  // Every pool some node belongs to, and every pool the policy names.
  std::set<std::string> KnownPools() const;
  const AdmissionLimits& admission() const { return admission_; }
  // 1 normalized throughput unit in measured KSPS, now.
  double UnitKsps() const;
  // Fills a submitted job's defaults and validates it against the policy and the boards of its
  // pool: whether some board could ever hold it, judged on what the boards are rated for.
  Result<v1::JobSpec> Admit(v1::JobSpec spec, const std::string& user);

  // Runs the scheduler over the current state, starts what it says, commits. A full pass
  // (head_depth 0) orders and considers every pending job. A quick pass considers only the
  // first `head_depth` in the order the last full pass found, with the jobs submitted since
  // merged in: first come, first served (no backfill, no growth), keeping the wait reasons the
  // full pass gave; what it cannot start waits for the next full pass. Its cost depends on
  // `head_depth` and on what changed, not on how many jobs wait. Returns whether the pass was
  // full (a quick one with no full order to start from is).
  bool RunSchedulingPass(size_t head_depth = 0);
  // When each pending job should start (master/sched/start_forecast.h), the first 1,000 in the
  // order the last full pass found (with the jobs submitted since merged in), expected to run
  // as their users' last two jobs did; `done` gets them on the io thread. Worked out again only
  // after a full pass or a change in the number of pending jobs, on a copy of the state, on a
  // thread of its own once set_post_to_io gave the way back (else at once, here).
  using Forecasts = std::unordered_map<uint64_t, StartForecast>;
  void StartForecasts(std::function<void(std::shared_ptr<const Forecasts>)> done);
  void set_post_to_io(ForecastWorker::Post post);
  // A pending job's forecast in `shown` (forecast_start_ms, forecast_basis).
  static void ShowForecast(const Forecasts& forecasts, v1::JobRecord& shown);
  // A pending job's waiting reason, as users see it.
  std::string PendingReason(const v1::JobRecord& job) const;
  // The billing ledger's holds changed (a charge, a credit): they apply from the next pass.
  void BudgetsChanged();
  // Reads back from the billing ledger what ended within the policy's core-hour windows (when
  // the ledger is set, and when a window grows).
  void LoadUsageWindow();
  // The advance reservations: each pass applies them; a submit naming one is checked by them.
  ReservationBook& reservations() { return reservations_; }
  // Counts starts, backfills and preemptions there (nullptr: nowhere).
  void set_metrics(MasterMetrics* metrics) { metrics_ = metrics; }

 private:
  // `nominal`: each board's rated throughput rather than its measured one (whether a job could
  // ever run is a question of what the boards are, not of how they measure now).
  std::vector<BoardCapacity> SchedulableBoards(bool only_up, bool nominal = false) const;
  // Every board, up or not, in classes for admission; rebuilt when the nodes change.
  const std::vector<BoardClass>& AdmissionBoards();
  void StartJob(v1::JobRecord& job, const StartDecision& decision);
  // A start decision for an array: its next element splits off and starts.
  void StartArrayElement(v1::JobRecord& array, const StartDecision& decision);
  // Adds a task on `p` to a running job and has it launched (a start, or an elastic grow).
  void AddTask(v1::JobRecord& job, const TaskPlacement& p);
  // Elastic jobs: extra replicas added on idle boards, or given back to another job.
  void GrowJob(v1::JobRecord& job, const GrowDecision& grow);
  void ShrinkJob(v1::JobRecord& job, const ShrinkDecision& shrink);
  // Stops a running job for another: requeued (counted, with the reason) or, if it may not be
  // requeued, failed.
  void Preempt(v1::JobRecord& job, const std::string& reason);

  // Constant after construction.
  JobTable& jobs_;
  NodeRegistry& nodes_;
  Journal& journal_;
  JobWriter& writer_;
  TaskDispatch& dispatch_;
  UsageRecorder& usage_;  // its usage window: what ended lately, for core-hour limits
  const Clock& clock_;
  const AdmissionLimits admission_;
  const std::function<void()> request_schedule_;
  MasterMetrics* metrics_ = nullptr;

  v1::SchedulingConfig scheduling_;
  SchedulerPolicy policy_;
  ReservationBook reservations_;
  ReservationBook::Holds reservation_holds_;  // the last pass's
  QueueOrder order_;
  std::unordered_set<uint64_t> explained_;  // pending jobs the last full pass gave a reason
  bool no_board_up_ = false;                // at the last pass
  uint64_t full_passes_ = 0;
  std::shared_ptr<const Forecasts> forecasts_;  // as of (full passes, pending jobs) then
  std::pair<uint64_t, size_t> forecasts_key_{0, 0};
  std::unique_ptr<ForecastWorker> forecast_worker_;
  std::vector<std::function<void(std::shared_ptr<const Forecasts>)>> forecast_waiters_;
  std::vector<BoardClass> admission_boards_;
  uint64_t admission_generation_ = UINT64_MAX;
};

}  // namespace snn
