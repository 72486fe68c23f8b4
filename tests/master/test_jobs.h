// Helpers for master unit tests: job records and boards in a few lines.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "master/jobs/job_table.h"
#include "master/sched/scheduler.h"

namespace snn::testing_helpers {

inline v1::JobRecord PendingJob(JobTable& table, const std::string& pool, uint32_t cores,
                                int32_t priority = 0, uint32_t replicas = 1) {
  v1::JobRecord job;
  job.set_id(table.NextJobId());
  job.set_tenant("t");
  job.set_tenant_job_id(table.NextTenantJobId("t"));
  job.set_state(v1::PENDING);
  job.mutable_spec()->set_pool(pool);
  job.mutable_spec()->set_priority(priority);
  job.mutable_spec()->set_min_replicas(replicas);
  auto* r = job.mutable_spec()->mutable_task()->mutable_resources();
  r->set_cores(cores);
  r->set_ksps(10);
  r->set_streams(1);
  return job;
}

// A board of `cores` cores in one row (so any count up to it fits as a 1-high rectangle).
inline BoardCapacity Board(const std::string& node, uint32_t index, uint32_t cores,
                           const std::string& pool = "default", const std::string& type = "sim") {
  BoardCapacity b;
  b.node = node;
  b.board = index;
  b.type = type;
  b.pools = {pool};
  auto grid = std::make_shared<CoreGrid>(cores, 1);
  b.largest_live = Rect{0, 0, cores, 1};
  b.grid = grid;
  b.ksps_total = b.ksps_free = 1000;
  b.streams_total = b.streams_free = 8;
  return b;
}

// A W x H board with some rectangles already held.
inline BoardCapacity MeshBoard(const std::string& node, uint32_t w, uint32_t h,
                               const std::vector<Rect>& held = {}) {
  BoardCapacity b = Board(node, 0, 1);
  auto grid = std::make_shared<CoreGrid>(w, h);
  b.largest_live = Rect{0, 0, w, h};
  for (const Rect& r : held) grid->Occupy(r);
  b.grid = grid;
  return b;
}

}  // namespace snn::testing_helpers
