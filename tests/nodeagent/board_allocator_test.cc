#include "nodeagent/boards/board_allocator.h"

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
  v1::BoardInfo info = Info(4, 4, 1000, 8);
  auto* dead = info.add_dead_cores();
  dead->set_x(1);
  dead->set_y(0);
  BoardAllocator alloc(info);
  SimBoard board(info);
  EXPECT_EQ(alloc.free_cores(), 15u);
  std::set<std::pair<uint32_t, uint32_t>> seen;
  uint64_t job = 0;
  while (true) {
    auto m = alloc.Allocate(TaskKey{++job, 0, 1}, Res(3, 10, 1));
    if (!m.ok()) {
      EXPECT_EQ(m.status().code(), Code::kResourceExhausted);
      EXPECT_NE(m.status().message().find("contiguous"), std::string::npos);
      break;
    }
    ASSERT_EQ(m->cores_size(), 3);
    EXPECT_EQ(m->rect().width() * m->rect().height(), 3u);  // 3 cores: a 3x1 or 1x3 rectangle
    std::vector<v1::CoreXY> cores(m->cores().begin(), m->cores().end());
    ASSERT_TRUE(board.Configure(TaskKey{job, 0, 1}, cores).ok());  // the board agrees
    for (const auto& c : m->cores()) {
      EXPECT_FALSE(c.x() == 1 && c.y() == 0) << "dead core handed out";
      EXPECT_TRUE(seen.insert({c.x(), c.y()}).second) << "core handed out twice";
    }
  }
  EXPECT_GE(job - 1, 4u) << "15 live cores should hold at least four 3-core tasks";
}

TEST(BoardAllocatorTest, MapsLogicalCoresRowMajorInTheRectangleWithRelayPaths) {
  v1::BoardInfo info = Info(8, 8, 1000, 4);
  info.mutable_io_port()->set_x(0);
  info.mutable_io_port()->set_y(0);
  BoardAllocator alloc(info);
  v1::CoreRect hint;
  hint.set_x(2);
  hint.set_y(3);
  hint.set_width(3);
  hint.set_height(2);
  v1::Resources r = Res(6, 10, 1);
  r.set_shape_width(3);
  r.set_shape_height(2);
  auto m = alloc.Allocate(TaskKey{1, 0, 1}, r, &hint);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->rect().x(), 2u);  // the master's hint was free: taken as is
  EXPECT_EQ(m->rect().y(), 3u);
  ASSERT_EQ(m->cores_size(), 6);
  EXPECT_EQ(m->cores(4).x(), 3u);  // logical 4 = second row, second column
  EXPECT_EQ(m->cores(4).y(), 4u);
  ASSERT_EQ(m->paths_size(), 6);
  // X then Y from the port (0,0) to (3,4): (0,0) -> (3,0) -> (3,4); spikes back: (3,4) -> (0,4) ->
  // (0,0).
  const auto& config = m->paths(4).config();
  ASSERT_EQ(config.size(), 3);
  EXPECT_EQ(config[1].x(), 3u);
  EXPECT_EQ(config[1].y(), 0u);
  const auto& spike = m->paths(4).spike();
  ASSERT_EQ(spike.size(), 3);
  EXPECT_EQ(spike[1].x(), 0u);
  EXPECT_EQ(spike[1].y(), 4u);
  // The same hint again is taken: the allocator places the second task elsewhere.
  auto m2 = alloc.Allocate(TaskKey{2, 0, 1}, r, &hint);
  ASSERT_TRUE(m2.ok());
  EXPECT_FALSE(m2->rect().x() == 2 && m2->rect().y() == 3);
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
  auto first = alloc.Allocate(TaskKey{1, 0, 1}, Res(4, 10, 1));
  auto again = alloc.Allocate(TaskKey{1, 0, 1}, Res(4, 10, 1));
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first->SerializeAsString(), again->SerializeAsString());
  EXPECT_EQ(alloc.free_cores(), 12u);
}

}  // namespace
}  // namespace snn
