#include "nodeagent/board_allocator.h"

#include <gtest/gtest.h>

#include <set>

#include "nodeagent/hal/sim_board.h"

namespace snn {
namespace {

v1::BoardInfo Info(uint32_t w, uint32_t h, uint32_t ksps, uint32_t streams) {
  v1::BoardInfo info;
  info.set_type("sim-v1");
  info.set_width(w);
  info.set_height(h);
  info.set_ksps(ksps);
  info.set_streams(streams);
  return info;
}

v1::Resources Res(uint32_t cores, uint32_t ksps, uint32_t streams) {
  v1::Resources r;
  r.set_cores(cores);
  r.set_ksps(ksps);
  r.set_streams(streams);
  return r;
}

TEST(BoardAllocatorTest, NeverHandsOutDeadOrTakenCores) {
  v1::BoardInfo info = Info(4, 4, 1000, 4);
  auto* dead = info.add_dead_cores();
  dead->set_x(1);
  dead->set_y(0);
  BoardAllocator alloc(info);
  SimBoard board(info);
  EXPECT_EQ(alloc.free_cores(), 15u);
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (uint64_t job = 1; job <= 3; ++job) {
    auto m = alloc.Allocate(TaskKey{job, 0, 1}, Res(5, 100, 1));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    ASSERT_EQ(m->cores_size(), 5);
    std::vector<v1::CoreXY> cores(m->cores().begin(), m->cores().end());
    ASSERT_TRUE(board.Configure(TaskKey{job, 0, 1}, cores).ok());  // the board agrees
    for (const auto& c : m->cores()) {
      EXPECT_FALSE(c.x() == 1 && c.y() == 0) << "dead core handed out";
      EXPECT_TRUE(seen.insert({c.x(), c.y()}).second) << "core handed out twice";
    }
  }
  auto full = alloc.Allocate(TaskKey{4, 0, 1}, Res(1, 1, 1));
  EXPECT_EQ(full.status().code(), Code::kResourceExhausted);
}

TEST(BoardAllocatorTest, ChannelsQueuesAndKspsAreExclusive) {
  BoardAllocator alloc(Info(8, 8, 300, 3));
  auto a = alloc.Allocate(TaskKey{1, 0, 1}, Res(1, 100, 2));
  auto b = alloc.Allocate(TaskKey{2, 0, 1}, Res(1, 100, 1));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->router_channels_size(), 2);
  EXPECT_NE(a->pulse_input_queue(), b->pulse_input_queue());
  EXPECT_NE(a->router_channels(0), b->router_channels(0));
  EXPECT_NE(a->router_channels(1), b->router_channels(0));
  EXPECT_EQ(alloc.Allocate(TaskKey{3, 0, 1}, Res(1, 10, 1)).status().code(),
            Code::kResourceExhausted);  // no channel left
  alloc.Free(TaskKey{1, 0, 1});
  EXPECT_EQ(alloc.Allocate(TaskKey{3, 0, 1}, Res(1, 250, 1)).status().code(),
            Code::kResourceExhausted);  // 200 ksps free, not 250
  auto c = alloc.Allocate(TaskKey{3, 0, 1}, Res(1, 200, 2));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(alloc.ksps_used(), 300u);
}

TEST(BoardAllocatorTest, AllocatingTheSameTaskTwiceGivesTheSameMapping) {
  BoardAllocator alloc(Info(4, 4, 100, 2));
  auto first = alloc.Allocate(TaskKey{1, 0, 1}, Res(3, 10, 1));
  auto again = alloc.Allocate(TaskKey{1, 0, 1}, Res(3, 10, 1));
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first->SerializeAsString(), again->SerializeAsString());
  EXPECT_EQ(alloc.free_cores(), 13u);
}

}  // namespace
}  // namespace snn
