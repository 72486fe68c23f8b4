#include "master/scheduler.h"

#include <algorithm>
#include <tuple>

#include "common/job_validation.h"

namespace snn {
namespace {

bool InPool(const BoardCapacity& b, const std::string& pool) {
  return std::find(b.pools.begin(), b.pools.end(), pool) != b.pools.end();
}

bool TypeMatches(const BoardCapacity& b, const v1::Resources& r) {
  return AnyBoardType(r.board_type()) || b.type == r.board_type();
}

std::string Describe(const v1::Resources& r) {
  std::string s = CoreRequestOf(r).ToString() + ", " + std::to_string(r.ksps()) + " ksps, " +
                  std::to_string(r.streams()) + " streams";
  if (!AnyBoardType(r.board_type())) s += " on a " + r.board_type() + " board";
  return s;
}

struct Candidate {
  BoardCapacity* board = nullptr;
  Placement placement;
};

// The best board for one replica: least waste, most contact, healthiest, first listed.
std::optional<Candidate> ChooseBoard(const std::vector<BoardCapacity*>& boards,
                                     const v1::Resources& r, const CoreRequest& request) {
  std::optional<Candidate> best;
  for (BoardCapacity* b : boards) {
    if (!TypeMatches(*b, r) || b->ksps_free < r.ksps() || b->streams_free < r.streams() ||
        b->current().free_count() < request.cores()) {
      continue;
    }
    if (!b->mers) b->mers = MaximalEmptyRectangles(b->current());
    auto p = PlaceCores(b->current(), *b->mers, request, FitPolicy::kBestFit);
    if (!p) continue;
    auto key = [](const Candidate& c) {
      return std::make_tuple(c.placement.waste, -int64_t{c.placement.contact},
                             -int64_t{c.board->health});
    };
    Candidate c{b, *p};
    if (!best || key(c) < key(*best)) best = c;
  }
  return best;
}

void Take(BoardCapacity& b, const v1::Resources& r, const Rect& rect, bool give_back) {
  if (!b.own) b.own = std::make_shared<CoreGrid>(*b.grid);
  if (give_back) {
    b.own->Release(rect);
    b.ksps_free += r.ksps();
    b.streams_free += r.streams();
  } else {
    b.own->Occupy(rect);
    b.ksps_free -= r.ksps();
    b.streams_free -= r.streams();
  }
  b.mers.reset();
}

std::string WaitReason(const std::string& pool, const std::vector<BoardCapacity*>& boards,
                       const v1::Resources& r, const CoreRequest& request, uint32_t replicas) {
  const BoardCapacity* roomiest = nullptr;  // enough of everything but a contiguous region
  bool any_could = false;
  for (const BoardCapacity* b : boards) {
    if (!BoardCanEverHold(*b, r)) continue;
    any_could = true;
    if (b->ksps_free >= r.ksps() && b->streams_free >= r.streams() &&
        b->current().free_count() >= request.cores() &&
        (!roomiest || b->current().free_count() > roomiest->current().free_count())) {
      roomiest = b;
    }
  }
  if (!any_could) {
    return "waiting for a board in pool '" + pool + "' that can hold " + Describe(r) +
           " (none is available now: down or drained)";
  }
  const std::string gang =
      replicas > 1 ? std::to_string(replicas) + " replicas of " : std::string();
  if (roomiest != nullptr && replicas == 1) {
    const Rect largest = LargestEmptyRectangle(roomiest->current());
    return "waiting for a contiguous " +
           (request.explicit_shape() ? request.ToString() + " region"
                                     : "region of " + request.ToString()) +
           ": " + roomiest->node + "/board" + std::to_string(roomiest->board) + " has " +
           std::to_string(roomiest->current().free_count()) +
           " free cores, but its largest free rectangle is " + std::to_string(largest.w) + "x" +
           std::to_string(largest.h);
  }
  return "waiting for resources: " + gang + Describe(r) + " on one board each";
}

}  // namespace

bool BoardCanEverHold(const BoardCapacity& b, const v1::Resources& r) {
  return TypeMatches(b, r) && b.ksps_total >= r.ksps() && b.streams_total >= r.streams() &&
         RectCanHold(b.largest_live, CoreRequestOf(r));
}

SchedulePlan PlanStarts(const JobTable& jobs, std::vector<BoardCapacity> boards, int64_t now_ms) {
  SchedulePlan plan;
  for (const auto& [pool, queue] : jobs.pending()) {
    std::vector<BoardCapacity*> pool_boards;
    for (auto& b : boards) {
      if (InPool(b, pool) && b.grid) pool_boards.push_back(&b);
    }
    for (const PendingKey& key : queue) {
      auto it = jobs.jobs().find(key.job_id);
      if (it == jobs.jobs().end()) continue;
      const v1::JobRecord& job = it->second;
      const v1::Resources& r = job.spec().task().resources();
      const CoreRequest request = CoreRequestOf(r);
      const uint32_t replicas = std::max(1u, job.spec().min_replicas());

      StartDecision start{job.id(), {}};
      for (uint32_t i = 0; i < replicas; ++i) {
        auto chosen = ChooseBoard(pool_boards, r, request);
        if (!chosen) break;
        Take(*chosen->board, r, chosen->placement.rect, /*give_back=*/false);
        start.tasks.push_back(
            TaskPlacement{chosen->board->node, chosen->board->board, chosen->placement.rect});
      }
      if (start.tasks.size() == replicas) {
        plan.starts.push_back(std::move(start));
        continue;
      }
      for (const TaskPlacement& t : start.tasks) {  // gang: no partial holds
        for (BoardCapacity* b : pool_boards) {
          if (b->node == t.node && b->board == t.board) Take(*b, r, t.rect, /*give_back=*/true);
        }
      }
      plan.waits.push_back(
          WaitDecision{job.id(), WaitReason(pool, pool_boards, r, request, replicas)});
      break;  // the head of this pool waits, and so does everything behind it
    }
  }
  (void)now_ms;
  return plan;
}

}  // namespace snn
