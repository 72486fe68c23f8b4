#include "nodeagent/drivers/driver_boards.h"

#include <glog/logging.h>

#include "common/base/board_constraint.h"
#include "nodeagent/hal/driver_board.h"

namespace snn {
namespace {

// The driver's own description of board `id`, booted and checked.
Result<v1::DriverBoard> Ready(DriverPool& pool, const BoardDriverRef& ref,
                              const v1::DriverDiscoverReply& found, const std::string& where) {
  const v1::DriverBoard* board = nullptr;
  for (const auto& b : found.boards()) {
    if (b.state().id() == ref.board) board = &b;
  }
  if (board == nullptr) {
    return FailedPrecondition(where + ": driver " + ref.driver + " has no board " + ref.board);
  }
  v1::DriverBoard ready = *board;
  if (board->state().power() != v1::BOARD_BOOTED) {
    v1::DriverRequest boot;
    boot.set_board(ref.board);
    boot.mutable_boot();
    auto booted = pool.CallNow(ref.driver, boot);
    if (!booted.ok()) {
      return Status(booted.status().code(),
                    where + ": booting " + ref.board + ": " + booted.status().message());
    }
    *ready.mutable_state() = booted->state();
    LOG(INFO) << where << ": " << ref.board << " booted " << booted->state().firmware() << " in "
              << booted->state().boot_ms() << " ms";
  }
  return ready;
}

}  // namespace

Result<std::vector<std::unique_ptr<Board>>> MakeBoards(const BoardsFile& file, DriverPool* pool,
                                                       uint64_t sim_memory_bytes) {
  if (!file.drivers.empty() && pool == nullptr) {
    return FailedPrecondition("the boards file names drivers, and none was started");
  }
  std::map<std::string, v1::DriverDiscoverReply> found;
  for (const auto& [name, config] : file.drivers) {
    if (!pool->hello(name).pass_through()) {
      return FailedPrecondition("driver " + name + " (" + pool->hello(name).driver() +
                                ") runs managed boards; the agent runs those itself for now: "
                                "list them without a driver");
    }
    v1::DriverRequest discover;
    discover.mutable_discover();
    auto answer = pool->CallNow(name, discover);
    if (!answer.ok())
      return Status(answer.status().code(), "driver " + name + ": " + answer.status().message());
    found[name] = answer->discover();
  }
  std::vector<std::unique_ptr<Board>> boards;
  for (size_t i = 0; i < file.boards.size(); ++i) {
    const v1::BoardInfo& info = file.boards[i];
    const BoardDriverRef& ref = file.board_drivers[i];
    if (ref.driver.empty()) {
      boards.push_back(std::make_unique<SimBoard>(info, sim_memory_bytes));
      continue;
    }
    const std::string where = "boards[" + std::to_string(i) + "]";
    if (pool->hello(ref.driver).board_type() != info.type()) {
      return FailedPrecondition(where + " is of type " + info.type() + ", but driver " +
                                ref.driver + " runs " + pool->hello(ref.driver).board_type());
    }
    auto ready = Ready(*pool, ref, found[ref.driver], where);
    if (!ready.ok()) return ready.status();
    auto board = std::make_unique<DriverBoard>(info, ref);
    std::map<std::string, std::string> attributes;
    for (const auto& [name, value] : ready->attributes()) {
      // What a constraint cannot name, or the master would refuse, stays out, said once.
      if (Status ok = CheckBoardAttribute(name, value); !ok.ok()) {
        LOG(WARNING) << where << ": driver " << ref.driver << "'s " << ok.message()
                     << "; left out of the board's attributes";
      } else if (attributes.size() + info.attributes_size() < kMaxBoardAttributes) {
        attributes[name] = value;
      }
    }
    board->SetAttributes(std::move(attributes));
    v1::DriverRequest check;
    check.set_board(ref.board);
    check.mutable_health_check();
    auto health = pool->CallNow(ref.driver, check);
    board->SetHealth(health.ok() && health->health().healthy(),
                     health.ok() ? health->health().output() : health.status().message());
    boards.push_back(std::move(board));
  }
  return boards;
}

}  // namespace snn
