// The node's boards and what the agent has handed out on them: each HAL board beside the
// allocator that chooses its tasks' cores, and the cores known dead.
// Thread contract: agent io thread only.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "nodeagent/boards/board_allocator.h"
#include "nodeagent/hal/board.h"

namespace snn {

class TaskBoards {
 public:
  explicit TaskBoards(std::vector<std::unique_ptr<Board>> boards);

  size_t size() const { return boards_.size(); }
  // Board `index` (null if there is none).
  Board* board(uint32_t index);
  std::vector<v1::BoardInfo> Describe() const;
  // Measures every board (Board::Fingerprint) and logs what each can do.
  void Fingerprint();

  // Cores for a task on `board`: the allocator's choice (`hint` if still free), configured on
  // the board; kResourceExhausted, saying what is missing, if it has no room. `hint_only` (a
  // session's step): exactly `hint` or nothing.
  Result<v1::TaskMapping> Place(uint32_t board, const TaskKey& key, const v1::Resources& r,
                                const v1::CoreRect* hint, bool hint_only = false);
  // Takes back exactly `mapping` for a task found running after an agent restart.
  Status Claim(uint32_t board, const TaskKey& key, const v1::Resources& r,
               const v1::TaskMapping& mapping);
  void Release(uint32_t board, const TaskKey& key);
  // Frees a task's cores and places it again on free live cores (the mapping keeps
  // `mapping_file`); an error if the board has no room (the task then holds nothing).
  Result<v1::TaskMapping> Move(uint32_t board, const TaskKey& key, const v1::Resources& r,
                               const std::string& mapping_file);
  // The cores board `index` reports dead that were not known dead: never handed out again.
  std::vector<v1::CoreXY> NewlyDead(uint32_t index);

 private:
  std::vector<std::unique_ptr<Board>> boards_;
  std::vector<BoardAllocator> allocators_;                          // by board index
  std::vector<std::set<std::pair<uint32_t, uint32_t>>> dead_seen_;  // by board index
};

}  // namespace snn
