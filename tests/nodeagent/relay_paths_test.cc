#include "nodeagent/boards/relay_paths.h"

#include <gtest/gtest.h>

#include <random>

namespace snn {
namespace {

v1::CoreXY XY(uint32_t x, uint32_t y) {
  v1::CoreXY c;
  c.set_x(x);
  c.set_y(y);
  return c;
}

// Walks the waypoints and checks each leg is straight and crosses no dead core.
bool ValidRoute(const CoreGrid& g, const std::vector<v1::CoreXY>& route, const v1::CoreXY& from,
                const v1::CoreXY& to) {
  if (route.empty() || route.front().x() != from.x() || route.front().y() != from.y() ||
      route.back().x() != to.x() || route.back().y() != to.y()) {
    return false;
  }
  for (size_t i = 0; i + 1 < route.size(); ++i) {
    const auto &a = route[i], &b = route[i + 1];
    if (a.x() != b.x() && a.y() != b.y()) return false;  // not a straight leg
    int64_t x = a.x(), y = a.y();
    while (true) {
      if (g.at(static_cast<uint32_t>(x), static_cast<uint32_t>(y)) == CoreGrid::kDead) return false;
      if (x == b.x() && y == b.y()) break;
      x += (b.x() > x) - (b.x() < x);
      y += (b.y() > y) - (b.y() < y);
    }
  }
  return true;
}

TEST(RelayPathsTest, XThenYWhenClear) {
  CoreGrid g(8, 8);
  g.Occupy(Rect{2, 0, 2, 2});  // busy cores relay: they do not block
  auto route = RouteAround(g, XY(0, 0), XY(5, 3));
  ASSERT_EQ(route.size(), 3u);
  EXPECT_EQ(route[1].x(), 5u);
  EXPECT_EQ(route[1].y(), 0u);
  EXPECT_EQ(RouteAround(g, XY(2, 2), XY(2, 2)).size(), 1u);
}

TEST(RelayPathsTest, AroundDeadCores) {
  CoreGrid g(8, 8);
  g.SetDead(3, 0);  // on the X-first leg
  auto route = RouteAround(g, XY(0, 0), XY(5, 3));
  EXPECT_TRUE(ValidRoute(g, route, XY(0, 0), XY(5, 3)));
  EXPECT_EQ(route[1].x(), 0u) << "Y then X avoids it";
  g.SetDead(0, 2);  // and now on the Y-first leg: a detour
  route = RouteAround(g, XY(0, 0), XY(5, 3));
  EXPECT_TRUE(ValidRoute(g, route, XY(0, 0), XY(5, 3)));
  // Walled off: no route.
  CoreGrid walled(4, 4);
  walled.SetDead(1, 0);
  walled.SetDead(0, 1);
  EXPECT_TRUE(RouteAround(walled, XY(0, 0), XY(3, 3)).empty());
}

TEST(RelayPathsTest, RandomDeadCoresAlwaysGiveValidRoutes) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 500; ++trial) {
    CoreGrid g(16, 16);
    for (int i = 0; i < 30; ++i) g.SetDead(rng() % 16, rng() % 16);
    const v1::CoreXY a = XY(rng() % 16, rng() % 16), b = XY(rng() % 16, rng() % 16);
    auto route = RouteAround(g, a, b);
    if (!route.empty()) {
      EXPECT_TRUE(ValidRoute(g, route, a, b)) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace snn
