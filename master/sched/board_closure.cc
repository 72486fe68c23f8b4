#include "master/sched/board_closure.h"

#include <algorithm>

namespace snn {

bool BoardClosure::OccurrenceAfter(int64_t t, int64_t* start, int64_t* end) const {
  int64_t s = start_ms, e = end_ms;
  if (e <= t) {
    if (period_ms <= 0) return false;
    const int64_t skip = (t - e) / period_ms + 1;  // occurrences that ended by t
    s += skip * period_ms;
    e += skip * period_ms;
  }
  *start = s;
  *end = e;
  return true;
}

bool BoardClosure::Meets(int64_t from, int64_t to) const {
  int64_t s = 0, e = 0;
  return to > from && OccurrenceAfter(from, &s, &e) && s < to;
}

bool AnyMeets(const BoardClosures& closures, int64_t from, int64_t to) {
  return std::any_of(closures.begin(), closures.end(),
                     [&](const BoardClosure& c) { return c.Meets(from, to); });
}

const BoardClosure* FirstMet(const BoardClosures& closures, int64_t from, int64_t to,
                             int64_t* start) {
  const BoardClosure* first = nullptr;
  for (const BoardClosure& c : closures) {
    int64_t s = 0, e = 0;
    if (to <= from || !c.OccurrenceAfter(from, &s, &e) || s >= to) continue;
    if (first == nullptr || s < *start) {
      first = &c;
      *start = s;
    }
  }
  return first;
}

int64_t FirstOpenStart(const BoardClosures& closures, int64_t from, int64_t run_ms) {
  int64_t t = from;
  for (int moves = 0; moves < 64; ++moves) {
    int64_t start = 0;
    const BoardClosure* met = FirstMet(closures, t, t + run_ms, &start);
    if (met == nullptr) return t;
    int64_t s = 0, e = 0;
    met->OccurrenceAfter(std::max(t, start), &s, &e);
    t = e;  // after the occurrence the run would meet
  }
  return INT64_MAX;
}

}  // namespace snn
