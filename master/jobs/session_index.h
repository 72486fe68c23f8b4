// The master's index of sessions (snnctl alloc) and their steps (snnctl run --alloc): the
// sessions not yet ended, which the reaper looks at each tick, and per task of a session the
// step running on it and those waiting their turn, oldest first. A session task runs one step
// at a time: a step holds the session's cores on that board, exactly. Rebuilt from the jobs at
// start. Pure data: no I/O, no clock. Thread contract: only on the master's io thread.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "proto/job.pb.h"

namespace snn {

class SessionIndex {
 public:
  // A session or a step, in whatever state (a restarted master adds every job it loads).
  void Add(const v1::JobRecord& job);
  void RemoveSession(uint64_t session) { sessions_.erase(session); }
  // The sessions not yet ended, by global id.
  const std::set<uint64_t>& sessions() const { return sessions_; }

  // A step of `session`'s task `task` stopped (ended or never started): it holds no turn.
  void StepGone(const v1::JobRecord& step);
  // The step that may start next on a session task: none (0) while one runs there.
  uint64_t NextStep(uint64_t session, uint32_t task) const;
  void StepStarted(const v1::JobRecord& step);
  // Whether a step of `session` is running on any of its tasks.
  bool AnyStepRunning(uint64_t session) const;
  // Every step of `session` not yet ended: running ones first.
  std::vector<uint64_t> StepsOf(uint64_t session) const;

 private:
  using Key = std::pair<uint64_t, uint32_t>;  // session, task
  struct Turns {
    uint64_t running = 0;
    std::deque<uint64_t> waiting;
  };
  static Key KeyOf(const v1::JobRecord& step) {
    return {step.session_id(), step.spec().alloc_task()};
  }
  std::set<uint64_t> sessions_;
  std::map<Key, Turns> turns_;
};

}  // namespace snn
