// Places a task's cores as one rectangle of free live cores on a CoreGrid. It enumerates the
// maximal empty rectangles (MERs) with an O(W*H) staircase scan; every empty rectangle lies in
// some MER, so a shape that fits anywhere is always found. Requests are a core count (the
// allocator chooses the shape: near-square, little waste, either orientation) or an explicit
// W x H (rotation allowed). Policies: first fit (top-left-most position) and best fit (the
// tightest MER, then the position touching the most busy cores and edges), the default.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/base/core_grid.h"
#include "common/base/status.h"

namespace snn {

enum class FitPolicy { kFirstFit, kBestFit };

// A request for cores: `count` cores in a shape the allocator chooses, or an explicit shape.
struct CoreRequest {
  uint32_t count = 0;
  uint32_t width = 0, height = 0;  // both set: explicit shape
  bool explicit_shape() const { return width > 0 && height > 0; }
  uint32_t cores() const { return explicit_shape() ? width * height : count; }
  std::string ToString() const;  // "12 cores" or "5x5"
};

// Parses "12" (a count) or "4x3" (a shape); zero sides and absurd sizes are errors.
Result<CoreRequest> ParseCoreRequest(const std::string& text);

struct Placement {
  Rect rect;
  uint32_t waste = 0;    // area of the chosen MER not used by the rectangle
  uint32_t contact = 0;  // perimeter neighbours that are busy, dead or off the board
};

std::vector<Rect> MaximalEmptyRectangles(const CoreGrid& grid);

// The maximal empty rectangles once `taken` is occupied, worked out from `before` (those of the
// grid without it) instead of the whole grid: the same rectangles in the same order as
// MaximalEmptyRectangles gives, at a fraction of the cost on a busy board.
std::vector<Rect> MaximalEmptyRectanglesAfter(const std::vector<Rect>& before, const Rect& taken);

// The shapes a count request may take on a W x H board, most preferred first.
std::vector<std::pair<uint32_t, uint32_t>> CandidateShapes(uint32_t count, uint32_t max_w,
                                                           uint32_t max_h);

// Where the request goes on this grid, or nothing if no rectangle of free cores can hold it.
std::optional<Placement> PlaceCores(const CoreGrid& grid, const CoreRequest& request,
                                    FitPolicy policy = FitPolicy::kBestFit);

// The same, reusing MERs already enumerated for `grid`.
std::optional<Placement> PlaceCores(const CoreGrid& grid, const std::vector<Rect>& mers,
                                    const CoreRequest& request, FitPolicy policy);

// The largest empty rectangle by area (ties: the more square one).
Rect LargestEmptyRectangle(const CoreGrid& grid);

// Whether a board whose free cores were exactly `space` (an empty board's largest live
// rectangle) could hold the request in some orientation and shape.
bool RectCanHold(const Rect& space, const CoreRequest& request);

// The largest area among `rects` (0 if none): with maximal empty rectangles, the most cores any
// one rectangular request could get.
uint32_t LargestArea(const std::vector<Rect>& rects);

}  // namespace snn
