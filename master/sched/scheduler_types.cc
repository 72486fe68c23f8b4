// The small methods of the types scheduler_types.h declares for every pass: a pending job's
// summary, a job's cores, the quota counters, and whether a board could ever hold a task.
#include "master/sched/scheduler_types.h"

#include <algorithm>

#include "common/base/job_validation.h"
#include "master/sched/pool_boards.h"

namespace snn {

PendingJob PendingJob::Of(const SchedJob& j) {
  const v1::Resources& r = *j.resources;
  PendingJob p;
  p.job = &j;
  p.id = j.id;
  p.pool = &j.pool;
  p.board_type = &r.board_type();
  p.constraints = &r.constraints();
  p.tenant = &j.tenant;
  p.queue = &j.queue;
  p.user = &j.user;
  p.submit_ms = j.submit_ms;
  p.time_limit_ms = j.time_limit_ms;
  p.cores = CoreRequestOf(r).cores();
  p.shape_width = r.shape_width();
  p.shape_height = r.shape_height();
  p.ksps = r.ksps();
  p.streams = r.streams();
  p.replicas = j.replicas;
  p.licenses = j.licenses != nullptr;
  p.array = j.array;
  p.reservation = j.reservation.empty() ? nullptr : &j.reservation;
  p.hold = j.hold ? &j.hold : nullptr;
  return p;
}

uint64_t SchedJob::cores() const { return uint64_t{replicas} * CoreRequestOf(*resources).cores(); }

uint64_t& QuotaUse::At(Map& map, const std::string& who, const std::string& pool) {
  auto it = map.find(NamePair(who, pool));
  if (it == map.end()) it = map.emplace(std::make_pair(who, pool), 0).first;
  return it->second;
}

void QuotaUse::Add(const SchedJob& job, uint64_t cores, int sign) {
  for (uint64_t* use : {&Tenant(job.tenant, job.pool), &Queue(job.queue, job.pool)}) {
    *use = sign > 0 ? *use + cores : *use - std::min(*use, cores);
  }
}

bool BoardCanEverHold(const BoardCapacity& b, const v1::Resources& r) {
  return BoardFits(r, b) && b.ksps_total >= r.ksps() && b.streams_total >= r.streams() &&
         RectCanHold(b.largest_live, CoreRequestOf(r));
}

}  // namespace snn
