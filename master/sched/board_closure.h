// An advance reservation as the boards it takes see it: from `start_ms` to `end_ms`, and again
// every `period_ms` after (0: once), a board is closed to every job that is not the
// reservation's. A pass checks a job's whole run, from its start to its start plus its time
// limit, against every closure of a board before it places a task there (PoolBoards::SetWindow),
// so a job that would still run when a reservation starts never starts on its boards.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace snn {

struct BoardClosure {
  std::string reservation;
  int64_t start_ms = 0, end_ms = 0;
  int64_t period_ms = 0;  // 0: once

  // The first occurrence that has not ended at `t`: [start, end) with end > t (start may be
  // before t: it is open then). False when none is left.
  bool OccurrenceAfter(int64_t t, int64_t* start, int64_t* end) const;
  // Whether a run over [from, to) meets an occurrence.
  bool Meets(int64_t from, int64_t to) const;
};

using BoardClosures = std::vector<BoardClosure>;

// Whether any closure meets [from, to).
bool AnyMeets(const BoardClosures& closures, int64_t from, int64_t to);

// The closure of `closures` whose occurrence met by [from, to) starts first; null if none.
const BoardClosure* FirstMet(const BoardClosures& closures, int64_t from, int64_t to,
                             int64_t* start);

// The earliest start at or after `from` from which a run of `run_ms` meets no closure;
// INT64_MAX if none is found within 64 moves past an occurrence (a run longer than the gaps
// between them).
int64_t FirstOpenStart(const BoardClosures& closures, int64_t from, int64_t run_ms);

}  // namespace snn
