#include "master/jobs/scheduling_driver.h"

#include <glog/logging.h>

#include <algorithm>
#include <map>

#include "common/base/array_spec.h"
#include "common/base/job_validation.h"
#include "master/jobs/job_arrays.h"

namespace snn {
namespace {

std::string Where(const v1::TaskRecord& task) {
  return task.node() + "/board" + std::to_string(task.board());
}

}  // namespace

SchedulingDriver::SchedulingDriver(JobTable& jobs, NodeRegistry& nodes, Journal& journal,
                                   JobWriter& writer, TaskDispatch& dispatch, UsageRecorder& usage,
                                   const Clock& clock, AdmissionLimits admission,
                                   std::function<void()> request_schedule)
    : jobs_(jobs),
      nodes_(nodes),
      journal_(journal),
      writer_(writer),
      dispatch_(dispatch),
      usage_(usage),
      clock_(clock),
      admission_(std::move(admission)),
      request_schedule_(std::move(request_schedule)) {}

Result<v1::JobSpec> SchedulingDriver::Admit(v1::JobSpec spec, const std::string& user) {
  AdmissionLimits limits = admission_;
  limits.unit_ksps = UnitKsps();
  SNN_RETURN_IF_ERROR(reservations_.BeforeAdmission(spec));
  auto admitted = AdmitJob(std::move(spec), user, limits, scheduling_, AdmissionBoards());
  if (admitted.ok()) SNN_RETURN_IF_ERROR(reservations_.AfterAdmission(*admitted));
  return admitted;
}

void SchedulingDriver::BudgetsChanged() {
  policy_.held_tenants.clear();
  if (BillingLedger* billing = usage_.billing()) policy_.held_tenants = billing->HeldTenants();
  request_schedule_();
}

double SchedulingDriver::UnitKsps() const {
  if (!admission_.unit_board_type.empty()) {
    if (const uint32_t median = nodes_.MedianKsps(admission_.unit_board_type)) {
      return median;
    }
  }
  return admission_.unit_ksps;
}

void SchedulingDriver::StartJob(v1::JobRecord& job, const StartDecision& decision) {
  if (metrics_ != nullptr) {
    // Since it last became pending: its submit, or its last requeue.
    const int64_t since =
        job.history_size() > 0 ? job.history(job.history_size() - 1).time_ms() : job.submit_ms();
    metrics_->JobStarted(static_cast<double>(clock_.NowMs() - since) / 1000.0, decision.backfilled);
  }
  job.set_attempt(job.attempt() + 1);
  job.clear_tasks();
  std::string where;
  for (size_t i = 0; i < decision.tasks.size(); ++i) {
    AddTask(job, decision.tasks[i]);
    if (i < 4) where += (where.empty() ? "" : ", ") + Where(job.tasks(static_cast<int>(i)));
  }
  if (decision.tasks.size() > 4) where += ", ...";
  jobs_.SetState(job, v1::RUNNING, clock_.NowMs(), "started on " + where);
  if (job.spec().kind() == v1::SESSION) job.set_idle_since_ms(clock_.NowMs());
  writer_.Persist(job);
}

void SchedulingDriver::StartArrayElement(v1::JobRecord& array, const StartDecision& decision) {
  // Checked again here: the pass saw the array as it was when the pass began.
  if (array.state() != v1::PENDING || array.array_left_size() == 0 ||
      ArrayStartsAllowed(array, jobs_.ArrayActive(array.id())) == 0) {
    return;
  }
  const uint32_t index = TakeNextIndex(array);
  array.set_array_started(array.array_started() + 1);
  v1::JobRecord element = ArrayElementOf(array, index);
  element.set_id(jobs_.NextJobId());
  element.set_tenant_job_id(ElementTenantJobId(array, index));
  v1::JobRecord& inserted = jobs_.Insert(std::move(element));
  jobs_.ArrayChanged(array, clock_.NowMs());
  writer_.Persist(array);
  StartJob(inserted, decision);
}

void SchedulingDriver::AddTask(v1::JobRecord& job, const TaskPlacement& p) {
  v1::TaskRecord* task = &jobs_.AddTask(job);
  const uint32_t index = task->index();
  task->set_node(p.node);
  task->set_board(p.board);
  v1::CoreRect* rect = task->mutable_mapping()->mutable_rect();
  rect->set_x(p.rect.x);
  rect->set_y(p.rect.y);
  rect->set_width(p.rect.w);
  rect->set_height(p.rect.h);
  nodes_.Reserve(p.node, p.board, job.spec().task().resources(), p.rect);
  if (!RunsOnAgents(job.spec())) {
    // Held here for the session's steps: no agent runs anything for it.
    jobs_.SetTaskState(*task, v1::TASK_RUNNING);
    task->set_start_ms(clock_.NowMs());
    task->set_detail(job.spec().kind() == v1::SERVICE
                         ? "held for the service's experiments (snnctl experiment submit " +
                               std::to_string(job.tenant_job_id()) + ")"
                         : "held for the session's steps (snnctl run --alloc " +
                               std::to_string(job.tenant_job_id()) + ")");
    return;
  }
  dispatch_.LaunchWhenDurable(job, index);
}

void SchedulingDriver::SetScheduling(const v1::SchedulingConfig& config) {
  scheduling_ = config;
  policy_ = ToSchedulerPolicy(config);
  order_.Configure(config);
  std::map<std::string, int32_t> queue_priority;
  for (const auto& q : config.queues()) queue_priority[q.name()] = q.priority();
  jobs_.SetQueuePriorities(std::move(queue_priority));
  if (BillingLedger* billing = usage_.billing()) {
    billing->SetConfig(config.billing());
    policy_.held_tenants = billing->HeldTenants();
  }
  if (usage_.window().Configure(config)) LoadUsageWindow();
}

void SchedulingDriver::LoadUsageWindow() {
  const BillingLedger* billing = usage_.billing();
  if (billing == nullptr) return;
  if (Status s = usage_.window().Load(*billing, clock_.NowMs()); !s.ok()) {
    // The limits then count only what ends from now on: said, not hidden.
    LOG(ERROR) << "core-hour limits: could not read the usage records back: " << s.ToString();
  }
}

std::set<std::string> SchedulingDriver::KnownPools() const {
  std::set<std::string> pools;
  for (const auto& [name, entry] : nodes_.nodes()) {
    pools.insert(entry.record.pools().begin(), entry.record.pools().end());
  }
  for (const auto& q : scheduling_.queues()) {
    for (const auto& c : q.pools()) pools.insert(c.pool());
  }
  for (const auto& t : scheduling_.tenants()) {
    for (const auto& c : t.quotas()) pools.insert(c.pool());
  }
  return pools;
}

namespace {

// A board's topology from its node's record; null if the node declares none (the usual case:
// nothing allocated).
std::shared_ptr<const BoardTopology> TopologyOf(const NodeEntry& entry, uint32_t board) {
  if (entry.record.switch_name().empty() && entry.record.links_size() == 0) return nullptr;
  auto topology = std::make_shared<BoardTopology>();
  topology->switch_name = entry.record.switch_name();
  for (const auto& l : entry.record.links()) {
    if (l.board() == board) topology->links.emplace_back(l.to_node(), l.to_board());
  }
  return topology;
}

}  // namespace

std::vector<BoardCapacity> SchedulingDriver::SchedulableBoards(bool only_up, bool nominal) const {
  std::vector<BoardCapacity> boards;
  for (const auto& [name, entry] : nodes_.nodes()) {
    if (only_up && !entry.up()) continue;
    for (const auto& info : entry.record.boards()) {
      if (only_up && (info.health() == 0 || !entry.DrainReason(info.index()).empty())) continue;
      BoardCapacity b;
      b.node = name;
      b.board = info.index();
      b.type = info.type();
      b.pass_through = info.pass_through();
      b.health = info.health();
      b.pools.assign(entry.record.pools().begin(), entry.record.pools().end());
      // Measured, not nominal: what it really carries.
      b.ksps_total = nominal ? info.ksps() : EffectiveKsps(info);
      if (b.ksps_total < info.ksps()) b.ksps_nominal = info.ksps();
      b.streams_total = info.streams();
      BoardUsage used;
      if (info.index() < entry.usage.size()) used = entry.usage[info.index()];
      auto free = [](uint32_t total, uint32_t u) { return total > u ? total - u : 0; };
      b.ksps_free = free(b.ksps_total, used.ksps);
      b.streams_free = free(b.streams_total, used.streams);
      b.largest_live = used.largest_live;
      b.topology = TopologyOf(entry, info.index());
      auto marks = entry.record.board_marks().find(info.index());
      if (info.attributes_size() > 0 || marks != entry.record.board_marks().end()) {
        auto attributes = std::make_shared<BoardCapacity::Attributes>(info.attributes().begin(),
                                                                      info.attributes().end());
        if (marks != entry.record.board_marks().end()) {  // the master's win over the driver's
          for (const auto& [name, value] : marks->second.values()) (*attributes)[name] = value;
        }
        b.attributes = std::move(attributes);
      }
      b.grid = used.grid;
      b.mers = used.mers;
      b.max_mer_area = used.max_mer_area;
      boards.push_back(std::move(b));
    }
  }
  return boards;
}

const std::vector<BoardClass>& SchedulingDriver::AdmissionBoards() {
  if (admission_generation_ != nodes_.generation()) {
    admission_boards_ = ClassifyBoards(SchedulableBoards(false, /*nominal=*/true));
    admission_generation_ = nodes_.generation();
  }
  return admission_boards_;
}

bool SchedulingDriver::RunSchedulingPass(size_t head_depth) {
  const int64_t now = clock_.NowMs();
  std::vector<BoardCapacity> boards = SchedulableBoards(true);
  // With no board up (as after the master's restart, until the agents register) a pass could
  // start, grow or make room for nothing: it would only cost a walk over every pending job.
  no_board_up_ = boards.empty();
  if (no_board_up_) {
    explained_.clear();
    return true;
  }
  const bool full = head_depth == 0 || !order_.has_order();
  SchedulerPolicy quick;
  if (!full) {
    quick = policy_;
    quick.backfill = false;
    quick.grow = false;
    quick.explain = false;
  }
  SchedulerInput in =
      CollectPassInput(jobs_, order_, std::move(boards), now, full ? 0 : head_depth);
  in.ended = usage_.window().Ended(now);
  reservations_.Apply(in, reservation_holds_);
  SchedulePlan plan = PlanPass(std::move(in), full ? policy_ : quick);
  for (const auto& p : plan.preemptions) {
    if (v1::JobRecord* job = jobs_.Find(p.job_id)) Preempt(*job, p.reason);
  }
  for (const auto& shrink : plan.shrinks) {
    if (v1::JobRecord* job = jobs_.Find(shrink.job_id)) ShrinkJob(*job, shrink);
  }
  for (const auto& start : plan.starts) {
    v1::JobRecord* job = jobs_.Find(start.job_id);
    if (job == nullptr) continue;
    if (job->spec().has_array()) {
      StartArrayElement(*job, start);
    } else {
      StartJob(*job, start);
    }
  }
  for (const auto& grow : plan.grows) {
    if (v1::JobRecord* job = jobs_.Find(grow.job_id)) GrowJob(*job, grow);
  }
  if (full) {  // a quick pass has no words to give: the full pass's stand until the next
    ++full_passes_;
    explained_.clear();
    for (const auto& wait : plan.waits) {
      if (v1::JobRecord* job = jobs_.Find(wait.job_id)) {
        explained_.insert(wait.job_id);
        job->set_reason(wait.why());
        job->set_expected_start_ms(wait.expected_start_ms);
      }
    }
  }
  if (!plan.starts.empty() || !plan.preemptions.empty() || !plan.grows.empty() ||
      !plan.shrinks.empty()) {
    journal_.Commit();
  }
  return full;
}

void SchedulingDriver::Preempt(v1::JobRecord& job, const std::string& reason) {
  if (job.state() != v1::RUNNING || job.requeue_when_stopped()) return;
  LOG(INFO) << "job " << job.id() << " " << reason;
  if (metrics_ != nullptr) metrics_->JobPreempted();
  job.set_preempt_count(job.preempt_count() + 1);
  if (job.spec().no_requeue()) {
    jobs_.SetState(job, v1::FAILED, clock_.NowMs(), reason + ", and the job may not be requeued");
  } else {
    job.set_requeue_when_stopped(true);
    job.set_reason("to be requeued: " + reason);
  }
  dispatch_.KillActiveTasks(job, reason);
  writer_.Persist(job);
}

void SchedulingDriver::GrowJob(v1::JobRecord& job, const GrowDecision& grow) {
  if (job.state() != v1::RUNNING || job.requeue_when_stopped()) return;
  uint32_t active = 0;
  for (const auto& t : job.tasks()) {
    if (t.given_back() == IsTaskActive(t.state())) return;  // giving back, or winding down
    active += IsTaskActive(t.state()) ? 1 : 0;
  }
  std::string added;
  for (const TaskPlacement& p : grow.tasks) {
    if (active++ >= job.spec().max_replicas()) break;
    AddTask(job, p);
    added += (added.empty() ? "" : ", ") + std::to_string(job.tasks_size() - 1);
  }
  if (added.empty()) return;
  LOG(INFO) << "job " << job.id() << " grows on idle boards: task(s) " << added;
  jobs_.TasksChanged(job, clock_.NowMs());
  writer_.Persist(job);
}

void SchedulingDriver::ShrinkJob(v1::JobRecord& job, const ShrinkDecision& shrink) {
  if (job.state() != v1::RUNNING) return;
  const uint32_t min = std::max(1u, job.spec().min_replicas());
  for (uint32_t index : shrink.tasks) {
    if (index < min || index >= uint32_t(job.tasks_size())) continue;  // only extras
    v1::TaskRecord& task = *job.mutable_tasks(static_cast<int>(index));
    if (!IsTaskActive(task.state()) || task.given_back()) continue;
    task.set_given_back(true);
    task.set_detail(shrink.reason);
    dispatch_.KillWhenDurable(task.node(), {job.id(), index, task.attempt()}, shrink.reason);
  }
  LOG(INFO) << "job " << job.id() << ": " << shrink.reason;
  jobs_.TasksChanged(job, clock_.NowMs());
  writer_.Persist(job);
}

std::string SchedulingDriver::PendingReason(const v1::JobRecord& job) const {
  // The last pass's own reason (a quota, a reservation it could delay, no room) when it gave
  // one; a pass gives none to the jobs behind a pool that first come, first served blocks.
  if (job.state() != v1::PENDING || ArrayExhausted(job)) return job.reason();
  if (job.spec().has_array() && job.user_hold().empty() && job.deps_pending_size() == 0 &&
      job.spec().after_corr_size() > 0 && job.array_left_size() > 0 &&
      !FirstIn(job.array_left(), job.array_corr_settled())) {
    return "waiting for element " + std::to_string(job.spec().after_corr(0)) + "_" +
           std::to_string(job.array_left(0).first()) + " to complete (after_corr)";
  }
  if (job.spec().has_array() && job.user_hold().empty() && job.deps_pending_size() == 0 &&
      ArrayStartsAllowed(job, jobs_.ArrayActive(job.id())) == 0) {
    return std::to_string(jobs_.ArrayActive(job.id())) + " of its elements run, the most its %" +
           std::to_string(job.spec().array().max_running()) + " allows at once";
  }
  if (explained_.count(job.id())) return job.reason();
  if (no_board_up_) return "no board is up: no agent has registered, or every node is down";
  return "waiting behind higher-priority jobs in pool '" + job.spec().pool() + "'";
}

}  // namespace snn
