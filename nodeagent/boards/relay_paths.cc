#include "nodeagent/boards/relay_paths.h"

#include <algorithm>
#include <deque>

namespace snn {
namespace {

v1::CoreXY XY(uint32_t x, uint32_t y) {
  v1::CoreXY c;
  c.set_x(x);
  c.set_y(y);
  return c;
}

bool Dead(const CoreGrid& g, uint32_t x, uint32_t y) { return g.at(x, y) == CoreGrid::kDead; }

// Whether the straight segment a -> b (same row or column) crosses no dead core.
bool Clear(const CoreGrid& g, const v1::CoreXY& a, const v1::CoreXY& b) {
  const int dx = b.x() > a.x() ? 1 : b.x() < a.x() ? -1 : 0;
  const int dy = b.y() > a.y() ? 1 : b.y() < a.y() ? -1 : 0;
  int64_t x = a.x(), y = a.y();
  while (true) {
    if (Dead(g, static_cast<uint32_t>(x), static_cast<uint32_t>(y))) return false;
    if (x == b.x() && y == b.y()) return true;
    x += dx;
    y += dy;
  }
}

// Endpoints and turns of a cell path.
std::vector<v1::CoreXY> Waypoints(const std::vector<std::pair<uint32_t, uint32_t>>& cells) {
  std::vector<v1::CoreXY> out;
  for (size_t i = 0; i < cells.size(); ++i) {
    const bool turn =
        i > 0 && i + 1 < cells.size() &&
        (cells[i - 1].first == cells[i].first) != (cells[i].first == cells[i + 1].first);
    if (i == 0 || i + 1 == cells.size() || turn) out.push_back(XY(cells[i].first, cells[i].second));
  }
  return out;
}

std::vector<v1::CoreXY> ShortestDetour(const CoreGrid& g, const v1::CoreXY& from,
                                       const v1::CoreXY& to) {
  const uint32_t W = g.width(), H = g.height();
  std::vector<int64_t> parent(size_t{W} * H, -2);
  std::deque<uint32_t> queue;
  const uint32_t start = from.y() * W + from.x(), goal = to.y() * W + to.x();
  parent[start] = -1;
  queue.push_back(start);
  while (!queue.empty() && parent[goal] == -2) {
    const uint32_t cell = queue.front();
    queue.pop_front();
    const uint32_t x = cell % W, y = cell / W;
    const int64_t next[4][2] = {{x + 1, y}, {int64_t{x} - 1, y}, {x, y + 1}, {x, int64_t{y} - 1}};
    for (const auto& n : next) {
      if (n[0] < 0 || n[1] < 0 || n[0] >= W || n[1] >= H) continue;
      const uint32_t id = static_cast<uint32_t>(n[1] * W + n[0]);
      if (parent[id] != -2 || Dead(g, static_cast<uint32_t>(n[0]), static_cast<uint32_t>(n[1]))) {
        continue;
      }
      parent[id] = cell;
      queue.push_back(id);
    }
  }
  if (parent[goal] == -2) return {};
  std::vector<std::pair<uint32_t, uint32_t>> cells;
  for (int64_t c = goal; c != -1; c = parent[c]) cells.emplace_back(c % W, c / W);
  std::reverse(cells.begin(), cells.end());
  return Waypoints(cells);
}

}  // namespace

std::vector<v1::CoreXY> RouteAround(const CoreGrid& grid, const v1::CoreXY& from,
                                    const v1::CoreXY& to) {
  if (Dead(grid, from.x(), from.y()) || Dead(grid, to.x(), to.y())) return {};
  auto path = [](std::initializer_list<v1::CoreXY> points) {
    std::vector<v1::CoreXY> out;
    for (const auto& p : points) {
      if (out.empty() || out.back().x() != p.x() || out.back().y() != p.y()) out.push_back(p);
    }
    return out;
  };
  const v1::CoreXY x_turn = XY(to.x(), from.y());  // X first, then Y
  if (Clear(grid, from, x_turn) && Clear(grid, x_turn, to)) return path({from, x_turn, to});
  const v1::CoreXY y_turn = XY(from.x(), to.y());  // Y first, then X
  if (Clear(grid, from, y_turn) && Clear(grid, y_turn, to)) return path({from, y_turn, to});
  return ShortestDetour(grid, from, to);
}

v1::RelayPath RelayPathFor(const CoreGrid& grid, const v1::CoreXY& io_port,
                           const v1::CoreXY& core) {
  v1::RelayPath path;
  for (const auto& p : RouteAround(grid, io_port, core)) *path.add_config() = p;
  for (const auto& p : RouteAround(grid, core, io_port)) *path.add_spike() = p;
  return path;
}

}  // namespace snn
