// The job controller's side of scheduling: the policy in force, the boards a pass may use, the
// pass itself (order, plan, then starts, preemptions and wait reasons applied), and the reason
// a pending job gives.
#include <glog/logging.h>

#include "common/job_validation.h"
#include "master/job_controller.h"

namespace snn {
void JobController::SetScheduling(const v1::SchedulingConfig& config) {
  scheduling_ = config;
  policy_ = ToSchedulerPolicy(config);
  order_.Configure(config);
  std::map<std::string, int32_t> queue_priority;
  for (const auto& q : config.queues()) queue_priority[q.name()] = q.priority();
  jobs_.SetQueuePriorities(std::move(queue_priority));
  if (billing_ != nullptr) {
    billing_->SetConfig(config.billing());
    policy_.held_tenants = billing_->HeldTenants();
  }
}

std::set<std::string> JobController::KnownPools() const {
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

std::vector<BoardCapacity> JobController::SchedulableBoards(bool only_up, bool nominal) const {
  std::vector<BoardCapacity> boards;
  for (const auto& [name, entry] : nodes_.nodes()) {
    if (only_up && !entry.up()) continue;
    for (const auto& info : entry.record.boards()) {
      if (only_up && (info.health() == 0 || !entry.DrainReason(info.index()).empty())) continue;
      BoardCapacity b;
      b.node = name;
      b.board = info.index();
      b.type = info.type();
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
      b.grid = used.grid;
      b.mers = used.mers;
      b.max_mer_area = used.max_mer_area;
      boards.push_back(std::move(b));
    }
  }
  return boards;
}

const std::vector<BoardClass>& JobController::AdmissionBoards() {
  if (admission_generation_ != nodes_.generation()) {
    admission_boards_ = ClassifyBoards(SchedulableBoards(false, /*nominal=*/true));
    admission_generation_ = nodes_.generation();
  }
  return admission_boards_;
}

bool JobController::RunSchedulingPass(size_t head_depth) {
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
  SchedulePlan plan = PlanPass(std::move(in), full ? policy_ : quick);
  for (const auto& p : plan.preemptions) {
    if (v1::JobRecord* job = jobs_.Find(p.job_id)) Preempt(*job, p.reason);
  }
  for (const auto& shrink : plan.shrinks) {
    if (v1::JobRecord* job = jobs_.Find(shrink.job_id)) ShrinkJob(*job, shrink);
  }
  for (const auto& start : plan.starts) {
    if (v1::JobRecord* job = jobs_.Find(start.job_id)) StartJob(*job, start);
  }
  for (const auto& grow : plan.grows) {
    if (v1::JobRecord* job = jobs_.Find(grow.job_id)) GrowJob(*job, grow);
  }
  if (full) {  // a quick pass has no words to give: the full pass's stand until the next
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

void JobController::Preempt(v1::JobRecord& job, const std::string& reason) {
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
  KillActiveTasks(job, reason);
  Persist(job);
}

Status JobController::Requeue(v1::JobRecord& job, const std::string& by) {
  const std::string name = "job " + std::to_string(job.tenant_job_id());
  if (job.state() != v1::RUNNING) {
    return FailedPrecondition(name + " is " + v1::JobState_Name(job.state()) +
                              ": only a running job can be requeued");
  }
  if (job.requeue_when_stopped()) return FailedPrecondition(name + " is being requeued already");
  const std::string reason = "asked by " + by + " (snnctl requeue)";
  LOG(INFO) << "job " << job.id() << " requeued: " << reason;
  job.set_requeue_when_stopped(true);
  job.set_reason("to be requeued: " + reason);
  KillActiveTasks(job, "requeued: " + reason);
  Persist(job);
  return Status::Ok();
}

void JobController::GrowJob(v1::JobRecord& job, const GrowDecision& grow) {
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
  Persist(job);
}

void JobController::ShrinkJob(v1::JobRecord& job, const ShrinkDecision& shrink) {
  if (job.state() != v1::RUNNING) return;
  const uint32_t min = std::max(1u, job.spec().min_replicas());
  for (uint32_t index : shrink.tasks) {
    if (index < min || index >= uint32_t(job.tasks_size())) continue;  // only extras
    v1::TaskRecord& task = *job.mutable_tasks(static_cast<int>(index));
    if (!IsTaskActive(task.state()) || task.given_back()) continue;
    task.set_given_back(true);
    task.set_detail(shrink.reason);
    journal_.Defer([this, node = task.node(), id = job.id(), index, attempt = task.attempt(),
                    reason = shrink.reason] { SendKill(node, id, index, attempt, reason); });
  }
  LOG(INFO) << "job " << job.id() << ": " << shrink.reason;
  jobs_.TasksChanged(job, clock_.NowMs());
  Persist(job);
}

std::string JobController::PendingReason(const v1::JobRecord& job) const {
  // The last pass's own reason (a quota, a reservation it could delay, no room) when it gave
  // one; a pass gives none to the jobs behind a pool that first come, first served blocks.
  if (job.state() != v1::PENDING || explained_.count(job.id())) return job.reason();
  if (no_board_up_) return "no board is up: no agent has registered, or every node is down";
  return "waiting behind higher-priority jobs in pool '" + job.spec().pool() + "'";
}

}  // namespace snn
