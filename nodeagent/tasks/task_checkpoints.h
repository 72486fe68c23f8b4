// Checkpoint directories that outlive a task's attempts. Each task of a job has one,
// ROOT/<tenant>.job<ID>.task<N>, named as the tenant knows the job (its per-tenant id, which is
// never reused) and from the master's numbers only: a task requeued, preempted or
// moved to another board or node (with ROOT on a file system the nodes share) finds the files
// its earlier attempt wrote there as $SNN_CHECKPOINT_DIR, without knowing where that ran.
// - Prepare creates it as the task's user's (0700), or checks that the one there is a directory
//   of that user's and not a link.
// - Latest finds the newest file in it, for the master to show.
// - A task that ends with exit 0 needs it no more: Remove. Any other end keeps it (the job may
//   run again, or its user may want what a failed run left); Sweep removes directories nobody
//   has touched for the keep time, and Touch keeps a running task's fresh.
// Removal never follows a link the user put in the directory (openat/unlinkat with O_NOFOLLOW).
// Thread-compatible.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "common/base/status.h"
#include "nodeagent/tasks/task_sandbox.h"
#include "proto/job.pb.h"
#include "proto/node.pb.h"

namespace snn {

// Which task a checkpoint directory belongs to: "lab-a.job18.task0".
struct CheckpointId {
  std::string tenant;
  uint64_t tenant_job_id = 0;
  uint32_t index = 0;
};

inline CheckpointId CheckpointIdOf(const v1::LaunchRequest& req) {
  return CheckpointId{req.tenant(), req.tenant_job_id(), req.index()};
}

class CheckpointStore {
 public:
  // `root` empty: checkpoints are off (no directory, no variable).
  CheckpointStore(std::string root, int64_t keep_ms) : root_(std::move(root)), keep_ms_(keep_ms) {}

  bool enabled() const { return !root_.empty(); }
  // Whether the task has a directory: not a session's step, which is never requeued or moved
  // (it lives and ends with its session), so a directory would be made and removed for nothing
  // at every step.
  bool Kept(const v1::LaunchRequest& req) const { return enabled() && !req.hint_only(); }
  const std::string& root() const { return root_; }
  std::string DirFor(const CheckpointId& id) const;

  Status Prepare(const CheckpointId& id, const RunAs& who) const;
  // The newest regular file directly in the directory (of the first 10,000 entries); no file:
  // an empty Checkpoint.
  v1::Checkpoint Latest(const CheckpointId& id) const;
  void Remove(const CheckpointId& id) const;
  void Touch(const CheckpointId& id, int64_t now_ms) const;
  // Removes every <tenant>.job<ID>.task<N> directory last changed more than the keep time before
  // `now_ms`, except those of `in_use` (DirFor names). Returns how many it removed.
  int Sweep(int64_t now_ms, const std::set<std::string>& in_use) const;

 private:
  std::string root_;
  int64_t keep_ms_;
};

}  // namespace snn
