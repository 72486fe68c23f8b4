#include "master/pass_jobs.h"

#include <algorithm>

#include "master/node_registry.h"
#include "master/policy_config.h"

namespace snn {

SchedJob ToSchedJob(const v1::JobRecord& job, const v1::SchedulingConfig& config) {
  SchedJob j;
  j.id = job.id();
  j.pool = job.spec().pool();
  j.tenant = job.tenant();
  j.queue = job.spec().queue();
  j.resources = &job.spec().task().resources();
  j.replicas = std::max(1u, job.spec().min_replicas());
  j.submit_ms = job.submit_ms();
  j.time_limit_ms = static_cast<int64_t>(job.spec().time_limit_s()) * 1000;
  j.preemptible = job.spec().preemptible();
  const v1::QueueConfig* queue = FindQueue(config, job.spec().queue());
  j.tier = {queue ? queue->priority() : 0, job.spec().priority()};
  if (job.state() == v1::RUNNING) {
    j.start_ms = job.start_ms();
    for (const auto& t : job.tasks()) {
      if (!IsTaskActive(t.state())) continue;
      j.tasks.push_back(TaskPlacement{t.node(), t.board(), RectOf(t.mapping().rect())});
    }
  }
  return j;
}

PassJobs CollectPassJobs(JobTable& jobs, QueueOrder& order, const v1::SchedulingConfig& config,
                         const std::map<std::string, uint64_t>& pool_cores, int64_t now_ms) {
  PassJobs out;
  out.pending.reserve(jobs.CountInState(v1::PENDING));
  for (const v1::JobRecord* job : order.Order(jobs, pool_cores, now_ms)) {
    out.pending.push_back(ToSchedJob(*job, config));
  }
  out.running.reserve(jobs.running().size());
  for (const auto& [id, r] : jobs.running()) out.running.push_back(ToSchedJob(*r.record, config));
  return out;
}

SchedulerInput MakeSchedulerInput(const PassJobs& jobs, std::vector<BoardCapacity> boards,
                                  int64_t now_ms) {
  SchedulerInput in;
  in.now_ms = now_ms;
  in.boards = std::move(boards);
  in.pending.reserve(jobs.pending.size());
  for (const SchedJob& j : jobs.pending) in.pending.push_back(&j);
  in.running.reserve(jobs.running.size());
  for (const SchedJob& j : jobs.running) in.running.push_back(&j);
  return in;
}

}  // namespace snn
