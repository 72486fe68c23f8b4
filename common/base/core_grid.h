// A board's W x H core grid as the allocators see it: each core free, busy (held by a task) or
// dead (never usable). Shared by the agent (authoritative mapping) and the master (its copy of
// each board's free map), so both place with the same code. Plain value; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace snn {

struct Rect {
  uint32_t x = 0, y = 0, w = 0, h = 0;
  uint32_t area() const { return w * h; }
  bool operator==(const Rect&) const = default;
  std::string ToString() const;  // "4x3@(2,5)"
};

class CoreGrid {
 public:
  enum Cell : uint8_t { kFree = 0, kBusy = 1, kDead = 2 };

  CoreGrid() = default;
  CoreGrid(uint32_t width, uint32_t height);

  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }
  Cell at(uint32_t x, uint32_t y) const { return static_cast<Cell>(cells_[y * width_ + x]); }
  bool free(uint32_t x, uint32_t y) const { return at(x, y) == kFree; }
  // Row y's cells (kFree, kBusy or kDead), width() of them.
  const uint8_t* row(uint32_t y) const { return &cells_[size_t{y} * width_]; }

  // Marks a core dead; a busy core stays busy until released, then becomes dead.
  void SetDead(uint32_t x, uint32_t y);
  // Whether every core of `r` lies on the grid and is free.
  bool IsFree(const Rect& r) const;
  // Marks every core of `r` busy (all must be free) or free again (busy ones only).
  void Occupy(const Rect& r);
  void Release(const Rect& r);

  uint32_t free_count() const { return free_count_; }
  uint32_t live_count() const { return width_ * height_ - dead_count_; }

 private:
  uint32_t width_ = 0, height_ = 0;
  std::vector<uint8_t> cells_;
  std::vector<uint8_t> dead_pending_;  // busy cores that die: dead once released
  uint32_t free_count_ = 0;
  uint32_t dead_count_ = 0;
};

}  // namespace snn
