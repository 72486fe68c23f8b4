// The scheduler core: pure. It takes the pending jobs (in priority order), the running jobs,
// every schedulable board's free capacity and free-core map, the policy and `now`, and returns
// which jobs start where (down to the rectangle of cores), which running jobs are preempted,
// and why the others wait (with the expected start of a job holding a reservation). No I/O, no
// clock, no daemon state: the master, the tests and the trace simulator (snn-sim) call it the
// same way.
//
// Policy, per pool:
//  - Jobs in the given order. A job that would put its tenant or its queue over its limit in
//    the pool waits (and says so); it holds nothing back.
//  - Each replica goes to the board where the rectangle allocator fits best (least waste, most
//    contact), then the healthier board. A job's `min` replicas start together or not at all.
//  - FCFS: the first job that cannot start blocks the rest of its pool.
//  - EASY backfill: the first job that cannot start gets a reservation: the earliest time, from
//    the running jobs' time limits, at which it fits, on given boards. Later jobs start now only
//    if they end (by their time limit) before it, or stay off what it reserved.
//  - Preemption: a job that cannot start may stop preemptible running jobs of a lower tier
//    (queue priority, then job priority), or, while its tenant (or queue) is under its
//    guarantee in the pool, preemptible jobs of tenants (queues) over theirs; never a job
//    younger than the grace period.
//    The fewest such jobs, lowest tier and youngest first, whose room lets it start.
//  - Elastic jobs: once every pending job has had its turn, running jobs below their max
//    replicas grow, one replica each in turn, on what is still idle (never on reserved room).
//    A job that cannot start has those extra replicas given back (lowest tier, youngest
//    first) before it preempts anything.
#pragma once

#include "master/sched/scheduler_types.h"

namespace snn {

SchedulePlan PlanPass(SchedulerInput input, const SchedulerPolicy& policy);

}  // namespace snn
