// The state of one pool during a scheduling pass, and the EASY pieces that work on it: placing
// a gang all or nothing, releasing what running jobs hold, and finding the head job's
// reservation. Internal to the scheduler (master/sched/scheduler.cc).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "master/sched/pool_boards.h"
#include "master/sched/scheduler_types.h"

namespace snn {

// The hold a placed gang leaves on each board it uses, as `boards` are then.
Holds HoldsOf(const PoolBoards& boards, const Gang& gang);

struct PoolState {
  PoolBoards boards;
  std::vector<std::pair<int64_t, const SchedJob*>> running;  // with its expected end
  // What this pass placed, one replica each: (expected end, board index, rectangle, request).
  // A reservation must see it end, or the boards a job just took would look busy for ever.
  struct Placed {
    int64_t end_ms;
    size_t index;
    Rect rect;
    const v1::Resources* resources;
  };
  std::vector<Placed> placed;
  // Running jobs of account-tree tenants that are no session or service: what a subtree within
  // its share may take back when theirs borrows (filled only where a tree governs the pool).
  std::vector<const SchedJob*> reclaimable;
  std::vector<int> reclaimable_nodes;  // their tenants' tree nodes, worked out at the first reclaim
  // The pending jobs within their share of the pool's account tree, in queue order, with their
  // node in the tree and their cores. Those that started in this pass or are held by their own
  // limits (`left_share`), and those before `within_share_head`, no longer count; whether the
  // first one left still is within its share is checked as the pass goes. While one is, no job
  // here borrows: lenders take back before others borrow.
  struct WithinShareJob {
    uint64_t id;
    int node;
    uint64_t cores;
  };
  std::vector<WithinShareJob> within_share;
  size_t within_share_head = 0;
  std::unordered_set<uint64_t> left_share;
  void LeftShare(uint64_t id) {
    if (within_share_head < within_share.size()) left_share.insert(id);
  }
  std::vector<const SchedJob*> preemptible;  // the running ones that are
  std::vector<const SchedJob*> elastic;      // the running ones that are
  bool blocked = false;              // FCFS: the first job that could not start holds the rest back
  bool reserved = false;             // EASY: one job holds a reservation
  const SchedJob* holder = nullptr;  // the job holding the reservation (it outlives the pass)
  int64_t shadow_ms = 0;             // when the reservation starts
  bool holder_starving = false;      // the holder waited past the starvation guard
  Holds holds;
  std::vector<char> unheld;                 // by board: no hold on it
  std::vector<const PendingJob*> backfill;  // later jobs, tried once the order is known
  // A pool of one class of identical one-core boards (BoardCapacity::units): counted.
  struct Units {
    BoardCapacity board;  // the class
    uint64_t free = 0;
    uint64_t extra = 0;  // with a reservation: what jobs still running at its start may take
    std::vector<std::pair<int64_t, uint64_t>> placed;  // this pass's starts: (end, units)
  };
  std::optional<Units> units;
  // Advance reservations: whether some board of the pool has closures (board_closure.h), and,
  // for a reservation's own pool, by when its jobs must end and its name.
  bool closures = false;
  int64_t ends_by_ms = INT64_MAX;
  const std::string* reservation = nullptr;

  // The job holding the reservation, as its tenant knows it: "job 18 of tenant lab-a" (the
  // words are shared by every waiting job of the same shape, whatever its tenant).
  std::string HolderWords() const {
    return "job " + std::to_string(holder->tenant_job_id ? holder->tenant_job_id : holder->id) +
           " of tenant " + holder->tenant;
  }
  // `job` reserves what `gang` takes on `boards` (a what-if copy of these), from `start_ms`.
  void HoldFor(const SchedJob& job, int64_t start_ms, const PoolBoards& boards, const Gang& gang) {
    reserved = true;
    holder = &job;
    shadow_ms = start_ms;
    holds = HoldsOf(boards, gang);
    unheld.resize(holds.size());
    for (size_t i = 0; i < holds.size(); ++i) unheld[i] = !holds[i];
  }
  // What could not start this pass -> why: a job asking the same waits without a new search.
  // Board types and constraints by pointer: jobs that name one through different strings only
  // miss this.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, const std::string*,
                      const std::string*, uint32_t, bool, int64_t>,
           std::shared_ptr<const std::string>>
      failed;
  // With closures, whether a job fits also depends on how long it runs: its time limit joins
  // the key of `failed` (0 without closures).
  int64_t FailedKeyLimit(int64_t time_limit_ms) const { return closures ? time_limit_ms : 0; }
};

// Places every replica, or none (no partial holds).
std::optional<Gang> PlaceGang(PoolBoards& boards, const SchedJob& job, const Holds* holds,
                              const std::vector<char>* prefer_not);

// When the job ends by its time limit (never before `now_ms`).
int64_t ExpectedEnd(const SchedJob& job, int64_t now_ms);

// Gives back what a running job's tasks hold; `but_extras`: its extra replicas are given back
// already.
void ReleaseTask(PoolBoards& boards, const SchedJob& job, const TaskPlacement& t);
void Release(PoolBoards& boards, const SchedJob& job, bool but_extras = false);

// EASY: the earliest time the job fits as the running jobs end by their time limits. The
// reservation prefers boards that are busy now, which leaves the free ones to backfill.
// False if it never fits.
bool Reserve(PoolState& pool, const SchedJob& job, int64_t now_ms);

// The same on a pool of one-core boards, for `need` of them: from the profile of the running
// jobs' (and this pass's starts') releases, from `now_ms`; where the class of boards has
// closures, at the first time after that from which its run meets none. Leaves in
// pool.units->extra what long jobs may still take. False if the pool never has that many.
// `textbook`: SchedulerPolicy::textbook_easy.
bool ReserveUnits(PoolState& pool, const SchedJob& job, uint64_t need, bool textbook,
                  int64_t now_ms);

// How many one-core boards a running job holds in a pool of them.
uint64_t UnitsHeld(const SchedJob& job);

}  // namespace snn
