#include "master/jobs/session_index.h"

#include <algorithm>

#include "common/base/job_validation.h"

namespace snn {

void SessionIndex::Add(const v1::JobRecord& job) {
  if (IsTerminalState(job.state())) return;
  if (job.spec().kind() == v1::SESSION || job.spec().kind() == v1::SERVICE) {
    sessions_.insert(job.id());
    return;
  }
  if (job.spec().kind() != v1::STEP) return;
  Turns& turns = turns_[KeyOf(job)];
  if (job.state() == v1::RUNNING) {
    turns.running = job.id();
  } else if (std::find(turns.waiting.begin(), turns.waiting.end(), job.id()) ==
             turns.waiting.end()) {
    // Global ids grow with submission: oldest first, also when rebuilt out of order.
    turns.waiting.insert(std::upper_bound(turns.waiting.begin(), turns.waiting.end(), job.id()),
                         job.id());
  }
}

void SessionIndex::StepGone(const v1::JobRecord& step) {
  auto it = turns_.find(KeyOf(step));
  if (it == turns_.end()) return;
  Turns& turns = it->second;
  if (turns.running == step.id()) turns.running = 0;
  auto w = std::find(turns.waiting.begin(), turns.waiting.end(), step.id());
  if (w != turns.waiting.end()) turns.waiting.erase(w);
  if (turns.running == 0 && turns.waiting.empty()) turns_.erase(it);
}

uint64_t SessionIndex::NextStep(uint64_t session, uint32_t task) const {
  auto it = turns_.find({session, task});
  if (it == turns_.end() || it->second.running != 0 || it->second.waiting.empty()) return 0;
  return it->second.waiting.front();
}

void SessionIndex::StepStarted(const v1::JobRecord& step) {
  Turns& turns = turns_[KeyOf(step)];
  auto w = std::find(turns.waiting.begin(), turns.waiting.end(), step.id());
  if (w != turns.waiting.end()) turns.waiting.erase(w);
  turns.running = step.id();
}

bool SessionIndex::AnyStepRunning(uint64_t session) const {
  for (auto it = turns_.lower_bound({session, 0}); it != turns_.end() && it->first.first == session;
       ++it) {
    if (it->second.running != 0) return true;
  }
  return false;
}

std::vector<uint64_t> SessionIndex::StepsOf(uint64_t session) const {
  std::vector<uint64_t> running, waiting;
  for (auto it = turns_.lower_bound({session, 0}); it != turns_.end() && it->first.first == session;
       ++it) {
    if (it->second.running != 0) running.push_back(it->second.running);
    waiting.insert(waiting.end(), it->second.waiting.begin(), it->second.waiting.end());
  }
  running.insert(running.end(), waiting.begin(), waiting.end());
  return running;
}

}  // namespace snn
