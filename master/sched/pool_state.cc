#include "master/sched/pool_state.h"

#include <algorithm>
#include <functional>

#include "common/base/job_validation.h"
#include "master/sched/gang_topology.h"

namespace snn {

Holds HoldsOf(const PoolBoards& boards, const Gang& gang) {
  Holds holds(boards.size());
  for (const auto& [index, rect] : gang) {
    auto& h = holds[index];
    if (!h) h = BoardHold{{}, boards.board(index).ksps_free, boards.board(index).streams_free};
    h->rects.push_back(rect);
  }
  return holds;
}

std::optional<Gang> PlaceGang(PoolBoards& boards, const SchedJob& job, const Holds* holds,
                              const std::vector<char>* prefer_not) {
  if (boards.free_cores() < job.cores()) return std::nullopt;
  if (job.replicas > 1 && (job.spread != SchedJob::Spread::kDefault || boards.has_topology())) {
    return PlaceGangByTopology(boards, job, holds, prefer_not,
                               job.spread == SchedJob::Spread::kSpread);
  }
  const v1::Resources& r = *job.resources;
  const CoreRequest request = CoreRequestOf(r);
  Gang gang;
  for (uint32_t i = 0; i < job.replicas; ++i) {
    auto choice = boards.Choose(r, request, holds, prefer_not);
    if (!choice) {
      for (const auto& [index, rect] : gang) boards.GiveBack(index, r, rect);
      return std::nullopt;
    }
    boards.Take(choice->index, r, choice->placement.rect);
    gang.emplace_back(choice->index, choice->placement.rect);
  }
  return gang;
}

int64_t ExpectedEnd(const SchedJob& job, int64_t now_ms) {
  return std::max(now_ms, job.start_ms + job.time_limit_ms);
}

void ReleaseTask(PoolBoards& boards, const SchedJob& job, const TaskPlacement& t) {
  const size_t i = boards.Find(t.node, t.board);
  if (i != PoolBoards::npos) boards.GiveBack(i, *job.resources, t.rect);
}

void Release(PoolBoards& boards, const SchedJob& job, bool but_extras) {
  for (const TaskPlacement& t : job.tasks) {
    if (!(but_extras && t.extra)) ReleaseTask(boards, job, t);
  }
}

namespace {

// Whether `job` fits on `what_if` from `start_ms` to its time limit: if so, it holds the room
// (else `what_if` is left as it was).
bool TryHold(PoolState& pool, PoolBoards& what_if, const SchedJob& job, int64_t start_ms,
             const std::vector<char>& free_now) {
  if (start_ms + job.time_limit_ms > pool.ends_by_ms) return false;
  what_if.SetWindow(start_ms, start_ms + job.time_limit_ms);
  auto gang = PlaceGang(what_if, job, nullptr, &free_now);
  if (!gang) return false;
  pool.HoldFor(job, start_ms, what_if, *gang);
  return true;
}

// The ends of the first two occurrences after `from` of every closure on `boards`, in order
// (a run longer than the gap between two occurrences fits on none of a daily reservation's
// boards).
std::vector<int64_t> ClosureOpenings(const PoolBoards& boards, int64_t from) {
  std::vector<int64_t> openings;
  for (size_t i = 0; i < boards.size(); ++i) {
    const BoardCapacity& b = boards.board(i);
    if (!b.closures) continue;
    for (const BoardClosure& c : *b.closures) {
      int64_t s = 0, e = 0;
      for (int64_t k = 0, t = from; k < 2 && c.OccurrenceAfter(t, &s, &e); ++k, t = e) {
        openings.push_back(e);
      }
    }
  }
  std::sort(openings.begin(), openings.end());
  openings.erase(std::unique(openings.begin(), openings.end()), openings.end());
  return openings;
}

}  // namespace

bool Reserve(PoolState& pool, const SchedJob& job, int64_t now_ms) {
  PoolBoards what_if = pool.boards.Fork();
  const uint32_t per_task = CoreRequestOf(*job.resources).cores();
  std::vector<char> free_now(what_if.size(), 0);
  for (size_t i = 0; i < what_if.size(); ++i) {
    free_now[i] = what_if.board(i).current().free_count() >= per_task;
  }
  // The running jobs by expected end: sorted a slice at a time (the earliest 1,024, then the
  // next 2,048, ...), as far as it takes. Merged with what this pass placed; everything
  // ending at one time is released together.
  auto& ending = pool.running;
  auto earlier = [](const auto& a, const auto& b) { return a.first < b.first; };
  size_t sorted = 0;
  auto sort_through = [&](size_t i) {  // makes ending[0..i] sorted
    while (sorted <= i && sorted < ending.size()) {
      const size_t upto = std::min(ending.size(), std::max<size_t>(1024, 3 * sorted));
      std::nth_element(ending.begin() + sorted, ending.begin() + (upto - 1), ending.end(), earlier);
      std::sort(ending.begin() + sorted, ending.begin() + upto, earlier);
      sorted = upto;
    }
  };
  auto& placed = pool.placed;
  std::sort(placed.begin(), placed.end(),
            [](const auto& a, const auto& b) { return a.end_ms < b.end_ms; });
  // Where reservations close boards, the ends of their occurrences are times to try too.
  const std::vector<int64_t> openings =
      pool.closures ? ClosureOpenings(what_if, now_ms) : std::vector<int64_t>();
  size_t o = 0;
  size_t i = 0, k = 0;
  int64_t last = now_ms;  // the last release tried
  while (i < ending.size() || k < placed.size()) {
    if (i < ending.size()) sort_through(i);
    const int64_t end = std::min(i < ending.size() ? ending[i].first : INT64_MAX,
                                 k < placed.size() ? placed[k].end_ms : INT64_MAX);
    for (; o < openings.size() && openings[o] < end; ++o) {
      if (TryHold(pool, what_if, job, openings[o], free_now)) return true;
    }
    last = std::max(last, end);
    for (; i < ending.size(); ++i) {
      sort_through(i);
      if (ending[i].first != end) break;
      Release(what_if, *ending[i].second);
    }
    for (; k < placed.size() && placed[k].end_ms == end; ++k) {
      what_if.GiveBack(placed[k].index, *placed[k].resources, placed[k].rect);
    }
    if (what_if.BoardsThatMightHold(per_task) < job.replicas) continue;
    if (TryHold(pool, what_if, job, end, free_now)) return true;
  }
  // Everything released, and still closed: the reservations' later openings.
  for (int64_t t : ClosureOpenings(what_if, last)) {
    if (TryHold(pool, what_if, job, t, free_now)) return true;
  }
  return false;
}

uint64_t UnitsHeld(const SchedJob& job) {
  if (job.tasks.empty()) return job.replicas;
  uint64_t held = 0;
  for (const TaskPlacement& t : job.tasks) held += t.count;
  return held;
}

bool ReserveUnits(PoolState& pool, const SchedJob& job, uint64_t need, bool textbook,
                  int64_t now_ms) {
  PoolState::Units& units = *pool.units;
  if (need > units.board.units) return false;
  std::vector<std::pair<int64_t, uint64_t>> releases = units.placed;
  releases.reserve(releases.size() + pool.running.size());
  for (const auto& [end, running] : pool.running) releases.emplace_back(end, UnitsHeld(*running));
  // Earliest first, as far as it takes (a heap: the reservation is usually a few releases away).
  const auto later = std::greater<>();
  std::make_heap(releases.begin(), releases.end(), later);
  auto next = [&] {
    std::pop_heap(releases.begin(), releases.end(), later);
    const auto release = releases.back();
    releases.pop_back();
    return release;
  };
  const BoardClosures* closures = units.board.closures.get();
  uint64_t available = units.free;
  int64_t at = now_ms;
  while (true) {
    if (available >= need) {
      // Its whole run must miss the boards' closures: the first start from then that does.
      const int64_t start = closures ? FirstOpenStart(*closures, at, job.time_limit_ms) : at;
      if (start == INT64_MAX) return false;
      // Moved past a window: what is released by then is free too.
      while (start > at && !releases.empty() && releases.front().first <= start) {
        available += next().second;
      }
      pool.reserved = true;
      pool.holder = &job;
      pool.shadow_ms = start;
      units.extra = available - need;
      return true;
    }
    if (releases.empty()) return false;
    const auto [end, freed] = next();
    available += freed;
    at = end;
    while (!releases.empty() && releases.front().first == end && !(textbook && available >= need)) {
      available += next().second;
    }
  }
}

}  // namespace snn
