#include "common/base/core_grid.h"

namespace snn {

std::string Rect::ToString() const {
  return std::to_string(w) + "x" + std::to_string(h) + "@(" + std::to_string(x) + "," +
         std::to_string(y) + ")";
}

CoreGrid::CoreGrid(uint32_t width, uint32_t height)
    : width_(width),
      height_(height),
      cells_(size_t{width} * height, kFree),
      dead_pending_(size_t{width} * height, 0),
      free_count_(width * height) {}

void CoreGrid::SetDead(uint32_t x, uint32_t y) {
  if (x >= width_ || y >= height_) return;
  uint8_t& cell = cells_[y * width_ + x];
  if (cell == kDead || dead_pending_[y * width_ + x]) return;
  ++dead_count_;
  if (cell == kBusy) {
    dead_pending_[y * width_ + x] = 1;
    return;
  }
  cell = kDead;
  --free_count_;
}

bool CoreGrid::IsFree(const Rect& r) const {
  if (r.w == 0 || r.h == 0 || r.x + r.w > width_ || r.y + r.h > height_) return false;
  for (uint32_t y = r.y; y < r.y + r.h; ++y) {
    const uint8_t* row = &cells_[y * width_];
    for (uint32_t x = r.x; x < r.x + r.w; ++x) {
      if (row[x] != kFree) return false;
    }
  }
  return true;
}

void CoreGrid::Occupy(const Rect& r) {
  for (uint32_t y = r.y; y < r.y + r.h && y < height_; ++y) {
    for (uint32_t x = r.x; x < r.x + r.w && x < width_; ++x) {
      uint8_t& cell = cells_[y * width_ + x];
      if (cell == kFree) {
        cell = kBusy;
        --free_count_;
      }
    }
  }
}

void CoreGrid::Release(const Rect& r) {
  for (uint32_t y = r.y; y < r.y + r.h && y < height_; ++y) {
    for (uint32_t x = r.x; x < r.x + r.w && x < width_; ++x) {
      const size_t i = y * width_ + x;
      if (cells_[i] != kBusy) continue;
      if (dead_pending_[i]) {
        dead_pending_[i] = 0;
        cells_[i] = kDead;
      } else {
        cells_[i] = kFree;
        ++free_count_;
      }
    }
  }
}

}  // namespace snn
