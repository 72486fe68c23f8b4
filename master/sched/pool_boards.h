// The boards of one pool as one scheduling pass sees them: each board's free capacity and
// free-core map (copy on write), indexed by free cores so that finding a board for a task looks
// at the boards with room first instead of every board. Used for the pass itself and for the
// what-if copies that reservations and preemption need.
// Thread contract: one pass, one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/base/core_grid.h"
#include "common/base/job_validation.h"
#include "common/base/rect_allocator.h"
#include "master/sched/board_closure.h"
#include "proto/job.pb.h"

namespace snn {

struct BoardTopology {
  std::string switch_name;                              // the node's switch ("" if none)
  std::vector<std::pair<std::string, uint32_t>> links;  // boards it links to: (node, board)
};

struct BoardCapacity {
  std::string node;
  uint32_t board = 0;
  std::string type;
  bool pass_through = false;  // given only to jobs that name its type
  std::vector<std::string> pools;
  uint32_t health = 100;
  uint32_t ksps_total = 0, streams_total = 0;
  uint32_t ksps_free = 0, streams_free = 0;
  // What the board is rated for, where its measured throughput (ksps_total) is lower: a slowed
  // board, or a simulated one measured on a busy host. 0: the same as ksps_total.
  uint32_t ksps_nominal = 0;
  Rect largest_live;                     // on the empty board: bounds what can ever fit
  std::shared_ptr<const CoreGrid> grid;  // the free map now (shared, never modified here)
  // Not one board but a class of `units` identical one-core boards, `units_free` of them free
  // (as a trace of a machine of 93,312 processors is replayed): a pass counts what it takes
  // from them instead of placing each task (see TaskPlacement::count), and EASY reserves from
  // a profile of their releases. A pool with such a class has only it (others are ignored);
  // its jobs ask one core a task, and are not preempted or grown there.
  uint32_t units = 0, units_free = 0;
  // Topology (boards files' `switch:` and `links:`); null where the node declares none, so
  // that a cluster without topology pays one pointer a board.
  std::shared_ptr<const BoardTopology> topology;
  // What it reports of itself (driver or boards file attributes), for jobs' constraints; null
  // where it reports nothing.
  using Attributes = std::map<std::string, std::string, std::less<>>;
  std::shared_ptr<const Attributes> attributes;
  // The advance reservations that take it, for the jobs that are not theirs
  // (master/sched/board_closure.h); null where none does.
  std::shared_ptr<const BoardClosures> closures;

  // Scratch for one pass: a private copy of the map once something is placed on it, and its
  // maximal empty rectangles while unchanged.
  std::shared_ptr<CoreGrid> own;
  std::shared_ptr<const std::vector<Rect>> mers;  // of current(), when known
  uint32_t max_mer_area = 0;                      // with mers: the largest free rectangle's area
  const CoreGrid& current() const { return own ? *own : *grid; }
};

// Whether a task asking for board type `asked` ("" or "any": any) may run on `b`: a
// pass-through board only for the jobs that name its type.
inline bool TypeFits(const std::string& asked, const BoardCapacity& b) {
  return b.type == asked || (AnyBoardType(asked) && !b.pass_through);
}

// Whether a task asking for `r` may run on `b`: its type fits, and `b` meets its constraints
// (attributes, and `type` and `node`: common/base/board_constraint.h).
bool BoardFits(const v1::Resources& r, const BoardCapacity& b);
// The board's attribute `name` for a constraint.
std::optional<std::string_view> BoardAttribute(const BoardCapacity& b, std::string_view name);

// Part of a board held back for a reservation: a job that would still run when the reservation
// starts may not use the rectangle, and only what is left of ksps and streams then.
struct BoardHold {
  std::vector<Rect> rects;
  uint32_t ksps_left = 0, streams_left = 0;  // at the reservation's start, after it
};

struct BoardChoice {
  size_t index = 0;  // in the pool
  Placement placement;
};

class PoolBoards {
 public:
  PoolBoards() = default;
  explicit PoolBoards(std::vector<BoardCapacity> boards);

  // A what-if copy: the same state, changed independently. Boards and maps stay shared until
  // one side writes them, so a fork costs a few bytes a board.
  PoolBoards Fork() const;

  // The best board for one task: least waste, most contact, healthiest; among the first few
  // boards that can take it, scanning from the fewest free cores up. `holds` (by board index,
  // may be null) keeps reserved rectangles out. `prefer_not` (by index, may be null) are
  // boards to use only if no other fits.
  std::optional<BoardChoice> Choose(const v1::Resources& r, const CoreRequest& request,
                                    const std::vector<std::optional<BoardHold>>* holds,
                                    const std::vector<char>* prefer_not);

  // The run of the job being placed, from its start to its start plus its time limit: Choose
  // keeps off boards a reservation closes within it. Forks inherit it. Until it is set, the
  // run is taken as never ending (a board with any closure left is not chosen).
  void SetWindow(int64_t from_ms, int64_t to_ms) {
    window_from_ = from_ms;
    window_to_ = to_ms;
  }

  // Whether board `index` could take one task of `r` now, within the window (as Choose would
  // find it, holds aside).
  bool CouldTake(size_t index, const v1::Resources& r, const CoreRequest& request) {
    return TryBoard(index, r, request, nullptr).has_value();
  }

  void Take(size_t index, const v1::Resources& r, const Rect& rect);
  void GiveBack(size_t index, const v1::Resources& r, const Rect& rect);
  // Finds a board by node and index (for releasing a running job's tasks); npos if absent.
  size_t Find(const std::string& node, uint32_t board) const;

  // For a wait reason: among the boards with the most room (scanning at most `looked` of them
  // from the top of the index), the one with the most free cores that has enough of
  // everything else for `r` and at least `cores` free cores; null if none.
  const BoardCapacity* Roomiest(const v1::Resources& r, uint32_t cores, size_t looked) const;

  size_t size() const { return base_ ? base_->size() : 0; }
  // How many boards might hold a task of `cores` (an upper bound: by free cores, or by the
  // largest free rectangle where known).
  size_t BoardsThatMightHold(uint32_t cores) const;
  const BoardCapacity& board(size_t i) const { return changed_[i] ? *changed_[i] : (*base_)[i]; }
  uint64_t free_cores() const { return free_cores_; }
  // Whether any board declares a switch or links: gangs are then placed by them.
  bool has_topology() const { return has_topology_; }

  static constexpr size_t npos = SIZE_MAX;

 private:
  // Moves a board to the bucket of its key: its free cores, or, once its free rectangles are
  // known, the largest one's area (an upper bound on what it can take either way).
  void Reindex(size_t index);
  uint32_t KeyOf(size_t index) const;
  void IndexNodes() const;  // on the first Find
  std::optional<Placement> TryBoard(size_t i, const v1::Resources& r, const CoreRequest& request,
                                    const std::vector<std::optional<BoardHold>>* holds);

  // A board this copy is about to change: its own copy (copy on write; see Fork).
  BoardCapacity& Writable(size_t index);
  // The boards as given, shared by every fork; a board changed here is in `changed_` instead
  // (shared with forks until one of them writes it). The scratch caches of a board (its free
  // rectangles) may be filled in wherever it lives: they describe the same state for all.
  std::shared_ptr<std::vector<BoardCapacity>> base_;
  std::vector<std::shared_ptr<BoardCapacity>> changed_;
  // Board indices by key (bucket per value), each board's slot in its bucket, and its key.
  std::vector<std::vector<uint32_t>> by_free_;
  std::vector<uint32_t> slot_;
  std::vector<uint32_t> key_;
  // Each node's first board, and each board's next one on the same node: built on the first
  // Find by any fork (they share it), over the node names of `base_`.
  struct NodeIndex {
    std::unordered_map<std::string_view, uint32_t> first;
    std::vector<uint32_t> next;
  };
  std::shared_ptr<NodeIndex> nodes_ = std::make_shared<NodeIndex>();
  uint64_t free_cores_ = 0;
  bool has_topology_ = false;
  int64_t window_from_ = 0, window_to_ = INT64_MAX;
};

// Where a gang's replicas are placed: (board index, rectangle) per replica; and what a
// reservation holds back on each board (none on a board it does not use).
using Gang = std::vector<std::pair<size_t, Rect>>;
using Holds = std::vector<std::optional<BoardHold>>;

}  // namespace snn
