#include "nodeagent/boards/board_allocator.h"

#include <set>

#include "common/base/job_validation.h"
#include "common/base/rect_allocator.h"
#include "nodeagent/boards/relay_paths.h"

namespace snn {
namespace {

Status Exhausted(const std::string& what) { return Status(Code::kResourceExhausted, what); }

bool HintFits(const v1::CoreRect& hint, const CoreRequest& req) {
  if (req.explicit_shape()) {
    return (hint.width() == req.width && hint.height() == req.height) ||
           (hint.width() == req.height && hint.height() == req.width);
  }
  return hint.width() * hint.height() >= req.count;
}

}  // namespace

BoardAllocator::BoardAllocator(const v1::BoardInfo& info)
    : ksps_total_(info.ksps()),
      io_port_(info.io_port()),
      grid_(info.width(), info.height()),
      channel_busy_(info.streams(), false) {
  for (const auto& c : info.dead_cores()) grid_.SetDead(c.x(), c.y());
}

Result<v1::TaskMapping> BoardAllocator::Allocate(const TaskKey& task, const v1::Resources& r,
                                                 const v1::CoreRect* hint) {
  if (auto it = holdings_.find(task); it != holdings_.end()) return it->second.mapping;
  if (ksps_used_ + r.ksps() > ksps_total_) {
    return Exhausted("board has " + std::to_string(ksps_total_ - ksps_used_) +
                     " ksps free, task needs " + std::to_string(r.ksps()));
  }
  uint32_t free_channels = 0;
  for (bool b : channel_busy_) free_channels += b ? 0 : 1;
  if (r.streams() > free_channels) {
    return Exhausted("board has " + std::to_string(free_channels) + " free streams, task needs " +
                     std::to_string(r.streams()));
  }
  const CoreRequest request = CoreRequestOf(r);
  Rect rect;
  if (hint != nullptr && hint->width() > 0 && HintFits(*hint, request) &&
      grid_.IsFree(Rect{hint->x(), hint->y(), hint->width(), hint->height()})) {
    rect = Rect{hint->x(), hint->y(), hint->width(), hint->height()};
  } else {
    auto placement = PlaceCores(grid_, request);
    if (!placement) {
      return Exhausted("board has no free contiguous region for " + request.ToString() + " (" +
                       std::to_string(grid_.free_count()) + " cores free in total)");
    }
    rect = placement->rect;
  }

  v1::TaskMapping mapping;
  auto* rm = mapping.mutable_rect();
  rm->set_x(rect.x);
  rm->set_y(rect.y);
  rm->set_width(rect.w);
  rm->set_height(rect.h);
  const uint32_t cores = request.cores();
  for (uint32_t i = 0; i < cores; ++i) {
    v1::CoreXY* c = mapping.add_cores();
    c->set_x(rect.x + i % rect.w);
    c->set_y(rect.y + i / rect.w);
    *mapping.add_paths() = RelayPathFor(grid_, io_port_, *c);
  }
  for (uint32_t ch = 0;
       ch < channel_busy_.size() && uint32_t(mapping.router_channels_size()) < r.streams(); ++ch) {
    if (!channel_busy_[ch]) mapping.add_router_channels(ch);
  }
  // The pulse input queue: the smallest id no other task on this board holds.
  std::set<uint32_t> queues;
  for (const auto& [key, h] : holdings_) queues.insert(h.mapping.pulse_input_queue());
  uint32_t queue = 0;
  while (queues.count(queue)) ++queue;
  mapping.set_pulse_input_queue(queue);

  grid_.Occupy(rect);
  for (uint32_t ch : mapping.router_channels()) channel_busy_[ch] = true;
  ksps_used_ += r.ksps();
  holdings_[task] = Holding{mapping, rect, r.ksps()};
  return mapping;
}

Status BoardAllocator::Claim(const TaskKey& task, const v1::Resources& r,
                             const v1::TaskMapping& mapping) {
  const Rect rect{mapping.rect().x(), mapping.rect().y(), mapping.rect().width(),
                  mapping.rect().height()};
  if (!grid_.IsFree(rect)) return FailedPrecondition("its cores " + rect.ToString() + " are taken");
  for (uint32_t ch : mapping.router_channels()) {
    if (ch >= channel_busy_.size() || channel_busy_[ch]) {
      return FailedPrecondition("its routing channel " + std::to_string(ch) + " is taken");
    }
  }
  grid_.Occupy(rect);
  for (uint32_t ch : mapping.router_channels()) channel_busy_[ch] = true;
  ksps_used_ += r.ksps();
  holdings_[task] = Holding{mapping, rect, r.ksps()};
  return Status::Ok();
}

void BoardAllocator::Free(const TaskKey& task) {
  auto it = holdings_.find(task);
  if (it == holdings_.end()) return;
  grid_.Release(it->second.rect);
  for (uint32_t ch : it->second.mapping.router_channels()) channel_busy_[ch] = false;
  ksps_used_ -= it->second.ksps;
  holdings_.erase(it);
}

void BoardAllocator::MarkDead(uint32_t x, uint32_t y) { grid_.SetDead(x, y); }

}  // namespace snn
