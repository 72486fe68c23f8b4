// The rectangle allocator against brute force on many random grids.
#include "common/base/rect_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>

namespace snn {
namespace {

CoreGrid RandomGrid(std::mt19937& rng, uint32_t w, uint32_t h, double busy, double dead) {
  CoreGrid g(w, h);
  std::uniform_real_distribution<double> u(0, 1);
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      const double r = u(rng);
      if (r < dead) {
        g.SetDead(x, y);
      } else if (r < dead + busy) {
        g.Occupy(Rect{x, y, 1, 1});
      }
    }
  }
  return g;
}

bool BruteForceFits(const CoreGrid& g, uint32_t w, uint32_t h) {
  for (uint32_t y = 0; y + h <= g.height(); ++y) {
    for (uint32_t x = 0; x + w <= g.width(); ++x) {
      if (g.IsFree(Rect{x, y, w, h})) return true;
    }
  }
  return false;
}

// Every empty rectangle that cannot grow in any direction.
std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> BruteForceMers(const CoreGrid& g) {
  std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> out;
  for (uint32_t y = 0; y < g.height(); ++y)
    for (uint32_t x = 0; x < g.width(); ++x)
      for (uint32_t h = 1; y + h <= g.height(); ++h)
        for (uint32_t w = 1; x + w <= g.width(); ++w) {
          if (!g.IsFree(Rect{x, y, w, h})) continue;
          const bool grows = (x > 0 && g.IsFree(Rect{x - 1, y, w + 1, h})) ||
                             (y > 0 && g.IsFree(Rect{x, y - 1, w, h + 1})) ||
                             g.IsFree(Rect{x, y, w + 1, h}) || g.IsFree(Rect{x, y, w, h + 1});
          if (!grows) out.insert({x, y, w, h});
        }
  return out;
}

TEST(RectAllocatorTest, MaximalEmptyRectanglesMatchBruteForce) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const uint32_t w = 1 + rng() % 12, h = 1 + rng() % 12;
    CoreGrid g = RandomGrid(rng, w, h, (rng() % 70) / 100.0, (rng() % 10) / 100.0);
    std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> got;
    for (const Rect& r : MaximalEmptyRectangles(g)) {
      EXPECT_TRUE(got.insert({r.x, r.y, r.w, r.h}).second) << "listed twice: " << r.ToString();
    }
    EXPECT_EQ(got, BruteForceMers(g)) << "trial " << trial << " grid " << w << "x" << h;
  }
}

TEST(RectAllocatorTest, RectanglesAfterATakeAreThoseOfTheNewGridInTheSameOrder) {
  std::mt19937 rng(5);
  int checked = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const uint32_t w = 1 + rng() % 16, h = 1 + rng() % 16;
    CoreGrid g = RandomGrid(rng, w, h, (rng() % 60) / 100.0, (rng() % 10) / 100.0);
    std::vector<Rect> mers = MaximalEmptyRectangles(g);
    // A run of takes, each worked out from the last, as a scheduling pass places tasks.
    for (int take = 0; take < 6 && !mers.empty(); ++take) {
      const Rect& room = mers[rng() % mers.size()];
      const uint32_t tw = 1 + rng() % room.w, th = 1 + rng() % room.h;
      const uint32_t dx = rng() % (room.w - tw + 1), dy = rng() % (room.h - th + 1);
      const Rect taken{room.x + dx, room.y + dy, tw, th};
      g.Occupy(taken);
      mers = MaximalEmptyRectanglesAfter(mers, taken);
      ASSERT_EQ(mers, MaximalEmptyRectangles(g))
          << "trial " << trial << ", take " << take << " of " << taken.ToString();
      ++checked;
    }
  }
  EXPECT_GT(checked, 5000);
}

TEST(RectAllocatorTest, PlacementsAreValidAndExplicitShapesAreFoundWheneverTheyFit) {
  std::mt19937 rng(11);
  int fits = 0, misses = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const uint32_t W = 1 + rng() % 24, H = 1 + rng() % 24;
    CoreGrid g = RandomGrid(rng, W, H, (rng() % 60) / 100.0, (rng() % 8) / 100.0);
    const uint32_t rw = 1 + rng() % std::min(W + 1, 10u), rh = 1 + rng() % std::min(H + 1, 10u);
    for (FitPolicy policy : {FitPolicy::kFirstFit, FitPolicy::kBestFit}) {
      CoreRequest explicit_req{0, rw, rh};
      auto p = PlaceCores(g, explicit_req, policy);
      const bool brute = BruteForceFits(g, rw, rh) || BruteForceFits(g, rh, rw);
      ASSERT_EQ(p.has_value(), brute) << "trial " << trial << " " << rw << "x" << rh;
      if (p) {
        ++fits;
        EXPECT_TRUE(g.IsFree(p->rect)) << p->rect.ToString();
        EXPECT_TRUE((p->rect.w == rw && p->rect.h == rh) || (p->rect.w == rh && p->rect.h == rw));
      } else {
        ++misses;
      }
      const uint32_t count = 1 + rng() % 30;
      auto c = PlaceCores(g, CoreRequest{count, 0, 0}, policy);
      if (c) {
        EXPECT_TRUE(g.IsFree(c->rect));
        EXPECT_GE(c->rect.area(), count);
      } else {
        // Nothing of any candidate shape fits anywhere.
        for (const auto& [w, h] : CandidateShapes(count, W, H)) {
          EXPECT_FALSE(BruteForceFits(g, w, h)) << count << " as " << w << "x" << h;
        }
      }
    }
  }
  EXPECT_GT(fits, 1000);
  EXPECT_GT(misses, 100);
}

TEST(RectAllocatorTest, SuccessivePlacementsNeverOverlap) {
  std::mt19937 rng(3);
  for (FitPolicy policy : {FitPolicy::kFirstFit, FitPolicy::kBestFit}) {
    CoreGrid g = RandomGrid(rng, 32, 32, 0, 0.02);
    std::vector<int> owner(32 * 32, -1);
    for (int task = 0; task < 200; ++task) {
      auto p = PlaceCores(g, CoreRequest{1 + static_cast<uint32_t>(rng() % 20), 0, 0}, policy);
      if (!p) continue;
      for (uint32_t y = p->rect.y; y < p->rect.y + p->rect.h; ++y)
        for (uint32_t x = p->rect.x; x < p->rect.x + p->rect.w; ++x) {
          ASSERT_EQ(owner[y * 32 + x], -1) << "core " << x << "," << y << " given twice";
          owner[y * 32 + x] = task;
        }
      g.Occupy(p->rect);
    }
  }
}

TEST(RectAllocatorTest, ShapesAreNearSquareWithLittleWaste) {
  auto shapes = CandidateShapes(12, 64, 64);
  ASSERT_FALSE(shapes.empty());
  EXPECT_EQ(shapes[0], std::make_pair(4u, 3u));
  EXPECT_EQ(CandidateShapes(16, 64, 64)[0], std::make_pair(4u, 4u));
  EXPECT_EQ(CandidateShapes(7, 64, 64)[0], std::make_pair(4u, 2u));
  EXPECT_EQ(CandidateShapes(7, 1, 64)[0], std::make_pair(1u, 7u));  // a one-wide board
}

TEST(RectAllocatorTest, BestFitHugsEdgesAndFirstFitTakesTheTopLeft) {
  CoreGrid g(8, 8);
  g.Occupy(Rect{0, 0, 3, 8});  // left three columns busy
  auto best = PlaceCores(g, CoreRequest{0, 2, 2}, FitPolicy::kBestFit);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->contact, 4u) << best->rect.ToString();  // in a corner, against busy cores
  auto first = PlaceCores(g, CoreRequest{0, 2, 2}, FitPolicy::kFirstFit);
  EXPECT_EQ(first->rect, (Rect{3, 0, 2, 2}));
}

TEST(RectAllocatorTest, DeadCoresAreNeverAllocatedEvenAfterRelease) {
  CoreGrid g(4, 4);
  g.Occupy(Rect{0, 0, 4, 4});
  g.SetDead(1, 1);  // dies under a task
  g.Release(Rect{0, 0, 4, 4});
  EXPECT_EQ(g.free_count(), 15u);
  EXPECT_EQ(g.live_count(), 15u);
  EXPECT_FALSE(PlaceCores(g, CoreRequest{0, 4, 4}));
  auto p = PlaceCores(g, CoreRequest{0, 4, 2});
  ASSERT_TRUE(p);
  EXPECT_TRUE(g.IsFree(p->rect));
  const bool covers_dead =
      p->rect.x <= 1 && 1 < p->rect.x + p->rect.w && p->rect.y <= 1 && 1 < p->rect.y + p->rect.h;
  EXPECT_FALSE(covers_dead) << p->rect.ToString();
  EXPECT_EQ(LargestEmptyRectangle(g).area(), 8u);
}

TEST(RectAllocatorTest, ParsesCountsAndShapes) {
  EXPECT_EQ(ParseCoreRequest("12")->count, 12u);
  auto shape = ParseCoreRequest("5x3");
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->width, 5u);
  EXPECT_EQ(shape->height, 3u);
  EXPECT_NE(ParseCoreRequest("0x3").status().message().find("zero side"), std::string::npos);
  EXPECT_FALSE(ParseCoreRequest("0").ok());
  EXPECT_FALSE(ParseCoreRequest("300x2").ok());
  EXPECT_FALSE(ParseCoreRequest("4x").ok());
  EXPECT_FALSE(ParseCoreRequest("-4").ok());
  EXPECT_TRUE(RectCanHold(Rect{0, 0, 8, 4}, CoreRequest{0, 3, 6}));  // rotated
  EXPECT_FALSE(RectCanHold(Rect{0, 0, 8, 4}, CoreRequest{0, 5, 5}));
}

}  // namespace
}  // namespace snn
