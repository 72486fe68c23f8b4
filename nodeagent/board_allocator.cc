#include "nodeagent/board_allocator.h"

#include <set>

namespace snn {

BoardAllocator::BoardAllocator(const v1::BoardInfo& info)
    : width_(info.width()),
      height_(info.height()),
      ksps_total_(info.ksps()),
      busy_(size_t{info.width()} * info.height(), false),
      channel_busy_(info.streams(), false) {
  for (const auto& c : info.dead_cores()) busy_[Cell(c.x(), c.y())] = true;
  for (bool b : busy_) free_cores_ += b ? 0 : 1;
}

Result<v1::TaskMapping> BoardAllocator::Allocate(const TaskKey& task, const v1::Resources& r) {
  if (holdings_.count(task)) return holdings_[task].mapping;
  if (r.cores() > free_cores_) {
    return Status(Code::kResourceExhausted, "board has " + std::to_string(free_cores_) +
                                                " free cores, task needs " +
                                                std::to_string(r.cores()));
  }
  if (ksps_used_ + r.ksps() > ksps_total_) {
    return Status(Code::kResourceExhausted, "board has " +
                                                std::to_string(ksps_total_ - ksps_used_) +
                                                " ksps free, task needs " + std::to_string(r.ksps()));
  }
  uint32_t free_channels = 0;
  for (bool b : channel_busy_) free_channels += b ? 0 : 1;
  if (r.streams() > free_channels) {
    return Status(Code::kResourceExhausted, "board has " + std::to_string(free_channels) +
                                                " free streams, task needs " +
                                                std::to_string(r.streams()));
  }
  v1::TaskMapping mapping;
  for (uint32_t y = 0; y < height_ && uint32_t(mapping.cores_size()) < r.cores(); ++y) {
    for (uint32_t x = 0; x < width_ && uint32_t(mapping.cores_size()) < r.cores(); ++x) {
      if (busy_[Cell(x, y)]) continue;
      auto* c = mapping.add_cores();
      c->set_x(x);
      c->set_y(y);
    }
  }
  for (uint32_t ch = 0; ch < channel_busy_.size() &&
                        uint32_t(mapping.router_channels_size()) < r.streams(); ++ch) {
    if (!channel_busy_[ch]) mapping.add_router_channels(ch);
  }
  // The pulse input queue: the smallest id no other task on this board holds.
  std::set<uint32_t> queues;
  for (const auto& [key, h] : holdings_) queues.insert(h.mapping.pulse_input_queue());
  uint32_t queue = 0;
  while (queues.count(queue)) ++queue;
  mapping.set_pulse_input_queue(queue);
  SNN_RETURN_IF_ERROR(Claim(task, r, mapping));
  return mapping;
}

Status BoardAllocator::Claim(const TaskKey& task, const v1::Resources& r,
                             const v1::TaskMapping& mapping) {
  for (const auto& c : mapping.cores()) {
    if (c.x() >= width_ || c.y() >= height_ || busy_[Cell(c.x(), c.y())]) {
      return FailedPrecondition("core " + std::to_string(c.x()) + "," + std::to_string(c.y()) +
                                " is not free");
    }
  }
  for (uint32_t ch : mapping.router_channels()) {
    if (ch >= channel_busy_.size() || channel_busy_[ch]) {
      return FailedPrecondition("routing channel " + std::to_string(ch) + " is not free");
    }
  }
  for (const auto& c : mapping.cores()) busy_[Cell(c.x(), c.y())] = true;
  for (uint32_t ch : mapping.router_channels()) channel_busy_[ch] = true;
  free_cores_ -= mapping.cores_size();
  ksps_used_ += r.ksps();
  holdings_[task] = Holding{mapping, r.ksps()};
  return Status::Ok();
}

void BoardAllocator::Free(const TaskKey& task) {
  auto it = holdings_.find(task);
  if (it == holdings_.end()) return;
  for (const auto& c : it->second.mapping.cores()) busy_[Cell(c.x(), c.y())] = false;
  for (uint32_t ch : it->second.mapping.router_channels()) channel_busy_[ch] = false;
  free_cores_ += it->second.mapping.cores_size();
  ksps_used_ -= it->second.ksps;
  holdings_.erase(it);
}

}  // namespace snn
