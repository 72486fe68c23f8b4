#include "common/base/rect_allocator.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <tuple>

namespace snn {
namespace {

constexpr uint32_t kMaxSide = 256;

uint32_t Contact(const CoreGrid& g, const Rect& r) {
  uint32_t n = 0;
  auto blocked = [&](int64_t x, int64_t y) {
    return x < 0 || y < 0 || x >= int64_t{g.width()} || y >= int64_t{g.height()} ||
           !g.free(static_cast<uint32_t>(x), static_cast<uint32_t>(y));
  };
  for (uint32_t x = r.x; x < r.x + r.w; ++x) {
    n += blocked(x, int64_t{r.y} - 1);
    n += blocked(x, int64_t{r.y} + r.h);
  }
  for (uint32_t y = r.y; y < r.y + r.h; ++y) {
    n += blocked(int64_t{r.x} - 1, y);
    n += blocked(int64_t{r.x} + r.w, y);
  }
  return n;
}

// The distinct corners of `mer` where a w x h rectangle can sit; returns how many.
int Corners(const Rect& mer, uint32_t w, uint32_t h, Rect out[4]) {
  const uint32_t right = mer.x + mer.w - w, bottom = mer.y + mer.h - h;
  int n = 0;
  out[n++] = Rect{mer.x, mer.y, w, h};
  if (right != mer.x) out[n++] = Rect{right, mer.y, w, h};
  if (bottom != mer.y) {
    out[n++] = Rect{mer.x, bottom, w, h};
    if (right != mer.x) out[n++] = Rect{right, bottom, w, h};
  }
  return n;
}

bool Before(const Rect& a, const Rect& b) { return a.y != b.y ? a.y < b.y : a.x < b.x; }

// The best position for one shape (w, h), both orientations when `rotate`.
std::optional<Placement> PlaceShape(const CoreGrid& grid, const std::vector<Rect>& mers, uint32_t w,
                                    uint32_t h, bool rotate, FitPolicy policy) {
  std::optional<Placement> best;
  const int orientations = rotate && w != h ? 2 : 1;
  if (policy == FitPolicy::kFirstFit) {
    for (const Rect& m : mers) {
      for (int o = 0; o < orientations; ++o) {
        const uint32_t rw = o ? h : w, rh = o ? w : h;
        if (m.w < rw || m.h < rh) continue;
        const Rect r{m.x, m.y, rw, rh};
        if (!best || Before(r, best->rect)) best = Placement{r, m.area() - r.area(), 0};
      }
    }
    return best;
  }
  // Best fit: the tightest MERs first; among them, the corner with the most contact.
  uint32_t least_waste = UINT32_MAX;
  for (const Rect& m : mers) {
    for (int o = 0; o < orientations; ++o) {
      const uint32_t rw = o ? h : w, rh = o ? w : h;
      if (m.w >= rw && m.h >= rh) least_waste = std::min(least_waste, m.area() - rw * rh);
    }
  }
  if (least_waste == UINT32_MAX) return std::nullopt;
  for (const Rect& m : mers) {
    for (int o = 0; o < orientations; ++o) {
      const uint32_t rw = o ? h : w, rh = o ? w : h;
      if (m.w < rw || m.h < rh || m.area() - rw * rh != least_waste) continue;
      Rect corners[4];
      const int n = Corners(m, rw, rh, corners);
      for (int i = 0; i < n; ++i) {
        const Rect& r = corners[i];
        const uint32_t contact = Contact(grid, r);
        if (!best || contact > best->contact ||
            (contact == best->contact && Before(r, best->rect))) {
          best = Placement{r, least_waste, contact};
          // Blocked on every side: nothing can do better.
          if (contact == 2 * (rw + rh)) return best;
        }
      }
    }
  }
  return best;
}

}  // namespace

std::string CoreRequest::ToString() const {
  if (explicit_shape()) return std::to_string(width) + "x" + std::to_string(height);
  return std::to_string(count) + " cores";
}

Result<CoreRequest> ParseCoreRequest(const std::string& text) {
  const Status bad =
      InvalidArgument("cores '" + text + "' is neither a count (16) nor a shape WxH (4x4)");
  auto number = [](const std::string& s, uint32_t& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size() && !s.empty();
  };
  CoreRequest req;
  const size_t x = text.find_first_of("xX");
  if (x == std::string::npos) {
    if (!number(text, req.count)) return bad;
    if (req.count == 0) return InvalidArgument("cores must be at least 1");
    if (req.count > kMaxSide * kMaxSide) {
      return InvalidArgument("cores " + text + " is more than a 256x256 board holds");
    }
    return req;
  }
  if (!number(text.substr(0, x), req.width) || !number(text.substr(x + 1), req.height)) return bad;
  if (req.width == 0 || req.height == 0) {
    return InvalidArgument("shape " + text + " has a zero side; each side must be at least 1");
  }
  if (req.width > kMaxSide || req.height > kMaxSide) {
    return InvalidArgument("shape " + text + " has a side above 256, the largest mesh");
  }
  return req;
}

std::vector<Rect> MaximalEmptyRectangles(const CoreGrid& grid) {
  const uint32_t W = grid.width(), H = grid.height();
  // Each popped step is one candidate and a core is pushed at most once per row, so W*H + 1
  // slots suffice; writing every candidate and advancing only for maximal ones avoids a branch.
  std::vector<Rect> out(size_t{W} * H + 1);
  size_t n = 0;
  std::vector<uint32_t> heights(W + 1, 0);  // free cores above and at row y; a zero sentinel
  std::vector<uint32_t> below(W + 1, 0);    // blocked cores of the next row, prefix sums
  std::vector<uint32_t> stack_start(W + 1), stack_height(W + 1);
  for (uint32_t y = 0; y < H; ++y) {
    // Branch-free: on a busy board these tests are coin flips the CPU cannot predict.
    const uint8_t* cells = grid.row(y);
    for (uint32_t x = 0; x < W; ++x) {
      heights[x] = (heights[x] + 1) * static_cast<uint32_t>(cells[x] == CoreGrid::kFree);
    }
    if (y + 1 == H) {
      for (uint32_t x = 0; x < W; ++x) below[x + 1] = x + 1;
    } else {
      const uint8_t* next = grid.row(y + 1);
      for (uint32_t x = 0; x < W; ++x) {
        below[x + 1] = below[x] + static_cast<uint32_t>(next[x] != CoreGrid::kFree);
      }
    }
    // The staircase: open rectangles by start column, heights strictly increasing.
    uint32_t top = 0;
    for (uint32_t x = 0; x <= W; ++x) {
      const uint32_t h = heights[x];  // heights[W] is a zero sentinel
      uint32_t start = x;
      while (top > 0 && stack_height[top - 1] > h) {
        --top;
        const uint32_t s = stack_start[top], sh = stack_height[top];
        // Maximal left, right and up by construction; down if the next row blocks it.
        out[n] = Rect{s, y + 1 - sh, x - s, sh};
        n += below[x] != below[s];
        start = s;
      }
      if (h > (top > 0 ? stack_height[top - 1] : 0)) {
        stack_start[top] = start;
        stack_height[top] = h;
        ++top;
      }
    }
  }
  out.resize(n);
  return out;
}

std::vector<Rect> MaximalEmptyRectanglesAfter(const std::vector<Rect>& before, const Rect& taken) {
  // Every empty rectangle of the new grid lies in an old maximal one, on one side of `taken`:
  // so the pieces of each old rectangle left, right, above and below it, less those inside
  // another piece, are the new maximal ones (the MaxRects argument).
  std::vector<Rect> pieces;
  pieces.reserve(before.size() + 8);
  const uint32_t tx1 = taken.x + taken.w, ty1 = taken.y + taken.h;
  for (const Rect& m : before) {
    const uint32_t mx1 = m.x + m.w, my1 = m.y + m.h;
    if (taken.x >= mx1 || tx1 <= m.x || taken.y >= my1 || ty1 <= m.y) {
      pieces.push_back(m);
      continue;
    }
    if (taken.x > m.x) pieces.push_back(Rect{m.x, m.y, taken.x - m.x, m.h});
    if (tx1 < mx1) pieces.push_back(Rect{tx1, m.y, mx1 - tx1, m.h});
    if (taken.y > m.y) pieces.push_back(Rect{m.x, m.y, m.w, taken.y - m.y});
    if (ty1 < my1) pieces.push_back(Rect{m.x, ty1, m.w, my1 - ty1});
  }
  auto inside = [](const Rect& a, const Rect& b) {  // a within b
    return a.x >= b.x && a.y >= b.y && a.x + a.w <= b.x + b.w && a.y + a.h <= b.y + b.h;
  };
  std::vector<Rect> out;
  out.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    bool covered = false;
    for (size_t j = 0; j < pieces.size() && !covered; ++j) {
      // Equal pieces: the first one stays.
      covered = j != i && inside(pieces[i], pieces[j]) && (!(pieces[i] == pieces[j]) || j < i);
    }
    if (!covered) out.push_back(pieces[i]);
  }
  // MaximalEmptyRectangles' order: by bottom row, then right edge, then right to left.
  std::sort(out.begin(), out.end(), [](const Rect& a, const Rect& b) {
    return std::make_tuple(a.y + a.h, a.x + a.w, -int64_t{a.x}) <
           std::make_tuple(b.y + b.h, b.x + b.w, -int64_t{b.x});
  });
  return out;
}

std::vector<std::pair<uint32_t, uint32_t>> CandidateShapes(uint32_t count, uint32_t max_w,
                                                           uint32_t max_h) {
  std::vector<std::pair<uint32_t, uint32_t>> shapes;
  if (count == 0) return shapes;
  for (uint32_t w = 1; w <= max_w && w <= count; ++w) {
    const uint32_t h = (count + w - 1) / w;
    if (h <= max_h) shapes.emplace_back(w, h);
  }
  // Near-square and little waste: cost = 2 * waste + |w - h|; ties: less waste, then wider.
  auto cost = [count](const std::pair<uint32_t, uint32_t>& s) {
    const uint32_t waste = s.first * s.second - count;
    const uint32_t skew = s.first > s.second ? s.first - s.second : s.second - s.first;
    return std::make_tuple(2 * waste + skew, waste, -int64_t{s.first});
  };
  std::sort(shapes.begin(), shapes.end(),
            [&](const auto& a, const auto& b) { return cost(a) < cost(b); });
  return shapes;
}

std::optional<Placement> PlaceCores(const CoreGrid& grid, const std::vector<Rect>& mers,
                                    const CoreRequest& request, FitPolicy policy) {
  if (request.cores() == 0 || request.cores() > grid.free_count()) return std::nullopt;
  if (request.explicit_shape()) {
    return PlaceShape(grid, mers, request.width, request.height, /*rotate=*/true, policy);
  }
  // The tallest MER for each width: a shape (w, h) fits somewhere iff tallest[w] >= h.
  std::vector<uint32_t> tallest(grid.width() + 2, 0);
  for (const Rect& m : mers) tallest[m.w] = std::max(tallest[m.w], m.h);
  for (int w = static_cast<int>(grid.width()) - 1; w >= 1; --w) {
    tallest[w] = std::max(tallest[w], tallest[w + 1]);
  }
  // The candidate shapes depend only on (count, width, height): worked out once per thread.
  thread_local std::map<std::tuple<uint32_t, uint32_t, uint32_t>,
                        std::vector<std::pair<uint32_t, uint32_t>>>
      shapes_cache;
  auto key = std::make_tuple(request.count, grid.width(), grid.height());
  auto it = shapes_cache.find(key);
  if (it == shapes_cache.end()) {
    if (shapes_cache.size() > 4096) shapes_cache.clear();
    it = shapes_cache.emplace(key, CandidateShapes(request.count, grid.width(), grid.height()))
             .first;
  }
  for (const auto& [w, h] : it->second) {
    if (tallest[w] >= h) return PlaceShape(grid, mers, w, h, /*rotate=*/false, policy);
  }
  return std::nullopt;
}

std::optional<Placement> PlaceCores(const CoreGrid& grid, const CoreRequest& request,
                                    FitPolicy policy) {
  if (request.cores() == 0 || request.cores() > grid.free_count()) return std::nullopt;
  return PlaceCores(grid, MaximalEmptyRectangles(grid), request, policy);
}

Rect LargestEmptyRectangle(const CoreGrid& grid) {
  Rect best;
  for (const Rect& m : MaximalEmptyRectangles(grid)) {
    const uint32_t skew = m.w > m.h ? m.w - m.h : m.h - m.w;
    const uint32_t best_skew = best.w > best.h ? best.w - best.h : best.h - best.w;
    if (m.area() > best.area() || (m.area() == best.area() && skew < best_skew)) best = m;
  }
  return best;
}

uint32_t LargestArea(const std::vector<Rect>& rects) {
  uint32_t largest = 0;
  for (const Rect& r : rects) largest = std::max(largest, r.area());
  return largest;
}

bool RectCanHold(const Rect& space, const CoreRequest& request) {
  if (request.explicit_shape()) {
    return (space.w >= request.width && space.h >= request.height) ||
           (space.w >= request.height && space.h >= request.width);
  }
  for (const auto& [w, h] : CandidateShapes(request.count, space.w, space.h)) {
    if (w <= space.w && h <= space.h) return true;
  }
  return false;
}

}  // namespace snn
