#include "master/scheduler.h"

#include <algorithm>

#include "common/job_validation.h"

namespace snn {
namespace {

bool InPool(const BoardCapacity& b, const std::string& pool) {
  return std::find(b.pools.begin(), b.pools.end(), pool) != b.pools.end();
}

bool TypeMatches(const BoardCapacity& b, const v1::Resources& r) {
  return AnyBoardType(r.board_type()) || b.type == r.board_type();
}

bool FitsNow(const BoardCapacity& b, const v1::Resources& r) {
  return b.cores_free >= r.cores() && b.ksps_free >= r.ksps() && b.streams_free >= r.streams();
}

void Take(BoardCapacity& b, const v1::Resources& r, int sign) {
  b.cores_free -= sign * r.cores();
  b.ksps_free -= sign * r.ksps();
  b.streams_free -= sign * r.streams();
}

std::string Describe(const v1::Resources& r) {
  std::string s = std::to_string(r.cores()) + " cores, " + std::to_string(r.ksps()) + " ksps, " +
                  std::to_string(r.streams()) + " streams";
  if (!AnyBoardType(r.board_type())) s += " on a " + r.board_type() + " board";
  return s;
}

}  // namespace

bool BoardCanEverHold(const BoardCapacity& b, const v1::Resources& r) {
  return TypeMatches(b, r) && b.cores_total >= r.cores() && b.ksps_total >= r.ksps() &&
         b.streams_total >= r.streams();
}

SchedulePlan PlanStarts(const JobTable& jobs, std::vector<BoardCapacity> boards, int64_t now_ms) {
  SchedulePlan plan;
  for (const auto& [pool, queue] : jobs.pending()) {
    std::vector<BoardCapacity*> pool_boards;
    for (auto& b : boards) {
      if (InPool(b, pool)) pool_boards.push_back(&b);
    }
    for (const PendingKey& key : queue) {
      auto it = jobs.jobs().find(key.job_id);
      if (it == jobs.jobs().end()) continue;
      const v1::JobRecord& job = it->second;
      const v1::Resources& r = job.spec().task().resources();
      const uint32_t replicas = std::max(1u, job.spec().min_replicas());

      StartDecision start{job.id(), {}};
      std::vector<BoardCapacity*> taken;
      for (uint32_t i = 0; i < replicas; ++i) {
        BoardCapacity* chosen = nullptr;
        for (BoardCapacity* b : pool_boards) {
          if (TypeMatches(*b, r) && FitsNow(*b, r)) {
            chosen = b;
            break;
          }
        }
        if (chosen == nullptr) break;
        Take(*chosen, r, +1);
        taken.push_back(chosen);
        start.tasks.push_back(TaskPlacement{chosen->node, chosen->board});
      }
      if (start.tasks.size() == replicas) {
        plan.starts.push_back(std::move(start));
        continue;
      }
      for (BoardCapacity* b : taken) Take(*b, r, -1);  // gang: no partial holds

      const bool any_could = std::any_of(pool_boards.begin(), pool_boards.end(),
                                         [&](BoardCapacity* b) { return BoardCanEverHold(*b, r); });
      std::string reason;
      if (!any_could) {
        reason = "waiting for a board in pool '" + pool + "' that can hold " + Describe(r) +
                 " (none is up now)";
      } else {
        reason = "waiting for resources: " +
                 (replicas > 1 ? std::to_string(replicas) + " replicas of " : std::string()) +
                 Describe(r) + " on one board each";
      }
      plan.waits.push_back(WaitDecision{job.id(), std::move(reason)});
      break;  // the head of this pool waits, and so does everything behind it
    }
  }
  (void)now_ms;
  return plan;
}

}  // namespace snn
