#include "nodeagent/boards/task_boards.h"

#include <glog/logging.h>

namespace snn {

TaskBoards::TaskBoards(std::vector<std::unique_ptr<Board>> boards) : boards_(std::move(boards)) {
  for (const auto& b : boards_) {
    const v1::BoardInfo info = b->Describe();
    allocators_.emplace_back(info);
    auto& dead = dead_seen_.emplace_back();
    for (const auto& c : info.dead_cores()) dead.insert({c.x(), c.y()});
  }
}

Board* TaskBoards::board(uint32_t index) {
  return index < boards_.size() ? boards_[index].get() : nullptr;
}

std::vector<v1::BoardInfo> TaskBoards::Describe() const {
  std::vector<v1::BoardInfo> out;
  for (const auto& b : boards_) out.push_back(b->Describe());
  return out;
}

void TaskBoards::Fingerprint() {
  for (size_t i = 0; i < boards_.size(); ++i) {
    boards_[i]->Fingerprint();
    const v1::BoardInfo info = boards_[i]->Describe();
    LOG(INFO) << "board " << i << " (" << info.type() << "): capacity " << info.ksps()
              << " KSPS, measured " << info.measured_ksps() << " KSPS, latency "
              << info.latency_us() << " us";
  }
}

Result<v1::TaskMapping> TaskBoards::Place(uint32_t board, const TaskKey& key,
                                          const v1::Resources& r, const v1::CoreRect* hint,
                                          bool hint_only) {
  auto mapping = allocators_[board].Allocate(key, r, hint);
  if (!mapping.ok()) return mapping.status();
  const auto same = [](const v1::CoreRect& a, const v1::CoreRect& b) {
    return a.x() == b.x() && a.y() == b.y() && a.width() == b.width() && a.height() == b.height();
  };
  if (hint_only && (hint == nullptr || !same(mapping->rect(), *hint))) {
    allocators_[board].Free(key);
    return Status(Code::kResourceExhausted,
                  "the session's cores on board " + std::to_string(board) + " are not free here");
  }
  std::vector<v1::CoreXY> cores(mapping->cores().begin(), mapping->cores().end());
  if (Status s = boards_[board]->Configure(key, cores); !s.ok()) {
    allocators_[board].Free(key);
    return Status(Code::kResourceExhausted, "board refused the cores: " + s.message());
  }
  return mapping;
}

Status TaskBoards::Claim(uint32_t board, const TaskKey& key, const v1::Resources& r,
                         const v1::TaskMapping& mapping) {
  if (board >= boards_.size()) return InvalidArgument("no board " + std::to_string(board));
  SNN_RETURN_IF_ERROR(allocators_[board].Claim(key, r, mapping));
  std::vector<v1::CoreXY> cores(mapping.cores().begin(), mapping.cores().end());
  (void)boards_[board]->Configure(key, cores);
  return Status::Ok();
}

void TaskBoards::Release(uint32_t board, const TaskKey& key) {
  if (board >= boards_.size()) return;
  allocators_[board].Free(key);
  boards_[board]->Release(key);
}

Result<v1::TaskMapping> TaskBoards::Move(uint32_t board, const TaskKey& key, const v1::Resources& r,
                                         const std::string& mapping_file) {
  Release(board, key);
  auto mapping = allocators_[board].Allocate(key, r);
  if (!mapping.ok()) return mapping.status();
  mapping->set_mapping_file(mapping_file);
  std::vector<v1::CoreXY> cores(mapping->cores().begin(), mapping->cores().end());
  (void)boards_[board]->Configure(key, cores);
  return mapping;
}

std::vector<v1::CoreXY> TaskBoards::NewlyDead(uint32_t index) {
  std::vector<v1::CoreXY> died;
  if (index >= boards_.size()) return died;
  const v1::BoardInfo info = boards_[index]->Describe();
  for (const auto& c : info.dead_cores()) {
    if (dead_seen_[index].insert({c.x(), c.y()}).second) {
      allocators_[index].MarkDead(c.x(), c.y());
      died.push_back(c);
    }
  }
  return died;
}

}  // namespace snn
