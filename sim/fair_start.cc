#include "sim/fair_start.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <utility>

namespace snn {
namespace {

// Free processors over time from `from` on: a step function, `free` from each breakpoint on.
class Profile {
 public:
  // `free` processors at `from`, and more as each of `releases` (time, processors; by time, none
  // before `from`) comes.
  Profile(int64_t from, int64_t free, const std::vector<std::pair<int64_t, int64_t>>& releases) {
    steps_.emplace_back(from, free);
    for (const auto& [at, procs] : releases) {
      if (at == steps_.back().first) {
        steps_.back().second += procs;
      } else {
        steps_.emplace_back(at, steps_.back().second + procs);
      }
    }
  }

  // The earliest start, not before `not_before`, at which `procs` are free for `run` seconds;
  // then holds them.
  int64_t Place(int64_t procs, int64_t run, int64_t not_before) {
    run = std::max<int64_t>(run, 1);
    Split(std::max(not_before, steps_.front().first));
    for (size_t i = 0; i < steps_.size(); ++i) {
      const int64_t start = steps_[i].first;
      if (start < not_before) continue;
      bool fits = true;
      for (size_t k = i; k < steps_.size() && steps_[k].first < start + run; ++k) {
        if (steps_[k].second < procs) {
          fits = false;
          break;
        }
      }
      if (!fits) continue;
      auto first = Split(start);
      const size_t begin = static_cast<size_t>(first - steps_.begin());
      auto last = Split(start + run);
      const size_t end = static_cast<size_t>(last - steps_.begin());
      for (size_t k = begin; k < end; ++k) steps_[k].second -= procs;
      return start;
    }
    return steps_.back().first;  // unreachable: the last step has every processor free
  }

 private:
  // The step that begins at `at` (splitting the one that covers it).
  std::vector<std::pair<int64_t, int64_t>>::iterator Split(int64_t at) {
    auto it = std::lower_bound(steps_.begin(), steps_.end(), at,
                               [](const auto& s, int64_t t) { return s.first < t; });
    if (it != steps_.end() && it->first == at) return it;
    const int64_t free = std::prev(it)->second;
    return steps_.insert(it, {at, free});
  }

  std::vector<std::pair<int64_t, int64_t>> steps_;  // (from, free), by time
};

}  // namespace

FairStartFigures FairStarts(const std::vector<JobOutcome>& jobs, uint32_t max_procs) {
  FairStartFigures f;
  if (jobs.empty()) return f;
  std::vector<size_t> by_submit(jobs.size()), by_start(jobs.size());
  std::iota(by_submit.begin(), by_submit.end(), 0);
  std::iota(by_start.begin(), by_start.end(), 0);
  std::stable_sort(by_submit.begin(), by_submit.end(),
                   [&](size_t a, size_t b) { return jobs[a].submit_s < jobs[b].submit_s; });
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](size_t a, size_t b) { return jobs[a].start_s < jobs[b].start_s; });
  std::vector<size_t> position(jobs.size());  // in submit order
  for (size_t pos = 0; pos < by_submit.size(); ++pos) position[by_submit[pos]] = pos;
  std::set<std::pair<size_t, size_t>> waiting;  // (position, job): those that waited, in order
  std::multimap<int64_t, size_t> running;       // end -> job
  std::vector<std::pair<int64_t, int64_t>> releases;
  size_t next_start = 0;
  for (size_t pos = 0; pos < by_submit.size(); ++pos) {
    const size_t j = by_submit[pos];
    const int64_t t = jobs[j].submit_s;
    // Started by now: out of the waiting, into the running (if still running).
    for (; next_start < by_start.size() && jobs[by_start[next_start]].start_s <= t; ++next_start) {
      const size_t k = by_start[next_start];
      waiting.erase({position[k], k});  // a no-op unless it waited
      if (jobs[k].start_s + jobs[k].run_s > t) running.emplace(jobs[k].start_s + jobs[k].run_s, k);
    }
    while (!running.empty() && running.begin()->first <= t) running.erase(running.begin());
    if (jobs[j].start_s > t) {
      ++f.waited;
      int64_t busy = 0;
      releases.clear();
      for (const auto& [end, k] : running) {
        busy += jobs[k].procs;
        releases.emplace_back(end, jobs[k].procs);
      }
      Profile profile(t, static_cast<int64_t>(max_procs) - busy, releases);
      int64_t previous = t;  // in order of arrival: none starts before one that came earlier
      for (const auto& [p, k] : waiting)
        previous = profile.Place(jobs[k].procs, jobs[k].run_s, previous);
      const int64_t fair = profile.Place(jobs[j].procs, jobs[j].run_s, previous);
      if (jobs[j].start_s > fair) ++f.late;
      waiting.emplace(pos, j);
    }
  }
  f.late_share = static_cast<double>(f.late) / static_cast<double>(jobs.size());
  return f;
}

}  // namespace snn
