#include "nodeagent/hal/sim_board.h"

#include <algorithm>

namespace snn {

SimBoard::SimBoard(v1::BoardInfo info)
    : info_(std::move(info)),
      dead_(size_t{info_.width()} * info_.height(), false),
      owner_(size_t{info_.width()} * info_.height()) {
  for (const auto& c : info_.dead_cores()) {
    if (c.x() < info_.width() && c.y() < info_.height()) dead_[Cell(c.x(), c.y())] = true;
  }
}

Status SimBoard::Configure(const TaskKey& task, const std::vector<v1::CoreXY>& cores) {
  if (owners_.count(task)) return FailedPrecondition("task is already configured on this board");
  for (const auto& c : cores) {
    if (c.x() >= info_.width() || c.y() >= info_.height()) {
      return InvalidArgument("core outside the mesh");
    }
    const size_t cell = Cell(c.x(), c.y());
    if (dead_[cell]) return FailedPrecondition("core is dead");
    if (owner_[cell]) return FailedPrecondition("core is taken by another task");
  }
  auto& cells = owners_[task];
  for (const auto& c : cores) {
    const size_t cell = Cell(c.x(), c.y());
    owner_[cell] = task;
    cells.push_back(cell);
  }
  return Status::Ok();
}

void SimBoard::Release(const TaskKey& task) {
  auto it = owners_.find(task);
  if (it == owners_.end()) return;
  for (size_t cell : it->second) owner_[cell].reset();
  owners_.erase(it);
}

const TaskKey* SimBoard::Owner(uint32_t x, uint32_t y) const {
  if (x >= info_.width() || y >= info_.height()) return nullptr;
  const auto& owner = owner_[Cell(x, y)];
  return owner ? &*owner : nullptr;
}

}  // namespace snn

namespace snn {

Status SimBoard::KillCore(uint32_t x, uint32_t y) {
  if (x >= info_.width() || y >= info_.height()) {
    return InvalidArgument("core " + std::to_string(x) + "," + std::to_string(y) +
                           " is outside the " + std::to_string(info_.width()) + "x" +
                           std::to_string(info_.height()) + " mesh");
  }
  if (dead_[Cell(x, y)]) return Status::Ok();
  dead_[Cell(x, y)] = true;
  ++cores_killed_;
  auto* c = info_.add_dead_cores();
  c->set_x(x);
  c->set_y(y);
  return Status::Ok();
}

v1::BoardInfo SimBoard::Describe() const {
  v1::BoardInfo info = info_;
  const uint32_t penalty = std::min<uint32_t>(info.health(), 10 * cores_killed_);
  info.set_health(failed_ ? 0 : info.health() - penalty);
  info.set_measured_ksps(failed_ ? 0 : static_cast<uint32_t>(uint64_t{info.ksps()} * speed_percent_ / 100));
  return info;
}

Status SimBoard::SetSpeedPercent(uint32_t percent) {
  if (percent < 1 || percent > 100) return InvalidArgument("speed must be 1 to 100 percent");
  speed_percent_ = percent;
  return Status::Ok();
}

Status SimBoard::SetFailed(bool failed) {
  failed_ = failed;
  return Status::Ok();
}

}  // namespace snn
