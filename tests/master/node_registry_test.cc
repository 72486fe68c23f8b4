#include "master/nodes/node_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

namespace snn {
namespace {

v1::NodeRecord Node(const std::string& name) {
  v1::NodeRecord node;
  node.set_name(name);
  node.add_pools("default");
  auto* b = node.add_boards();
  b->set_width(4);
  b->set_height(4);
  b->add_dead_cores();
  return node;
}

class NodeRegistryTest : public ::testing::Test {
 protected:
  std::shared_ptr<Connection> Session() {
    return Connection::Create(tcp::socket(io_), 1024, nullptr, nullptr);
  }
  asio::io_context io_;
  NodeRegistry nodes_;
};

TEST_F(NodeRegistryTest, PeerMedianIsTheMedianOfEveryOtherMeasuredBoardOfTheType) {
  std::mt19937 rng(3);
  std::map<std::string, v1::NodeRecord> known;
  for (int round = 0; round < 400; ++round) {
    // Nodes register and re-register with new measurements, some boards measuring nothing.
    v1::NodeRecord node;
    node.set_name("n" + std::to_string(rng() % 40));
    node.add_pools("default");
    for (uint32_t i = 0; i < 1 + rng() % 3; ++i) {
      auto* b = node.add_boards();
      b->set_index(i);
      b->set_width(4);
      b->set_height(4);
      b->set_type(rng() % 3 == 0 ? "fast" : "slow");
      b->set_measured_ksps(rng() % 5 == 0 ? 0 : 100 + rng() % 50);
    }
    if (round % 2 == 0) {
      nodes_.Register(node, Session(), 1000);
    } else {
      nodes_.Restore(node, 1000);
    }
    known[node.name()] = node;
    for (const auto& [name, record] : known) {
      for (const auto& b : record.boards()) {
        if (b.measured_ksps() == 0) continue;
        std::vector<uint32_t> peers;  // the walk the registry saves
        for (const auto& [other_name, other] : known) {
          for (const auto& p : other.boards()) {
            if (p.type() == b.type() && p.measured_ksps() != 0 &&
                !(other_name == name && p.index() == b.index())) {
              peers.push_back(p.measured_ksps());
            }
          }
        }
        uint32_t expected = 0;
        if (!peers.empty()) {
          std::sort(peers.begin(), peers.end());
          expected = peers[peers.size() / 2];
        }
        ASSERT_EQ(nodes_.PeerMedianKsps(b.type(), b.measured_ksps()), expected)
            << "round " << round << ", " << name << "/" << b.index();
      }
    }
  }
}

TEST_F(NodeRegistryTest, NodesWithoutHeartbeatsGoDownAndComeBack) {
  auto s1 = Session();
  nodes_.Register(Node("n1"), s1, /*now_ms=*/1000);
  nodes_.Register(Node("n2"), Session(), 1000);
  ASSERT_TRUE(nodes_.Heartbeat("n1", s1.get(), 5000).ok());
  EXPECT_TRUE(nodes_.ExpireHeartbeats(/*now_ms=*/6000, /*timeout_ms=*/5000).empty());
  auto expired = nodes_.ExpireHeartbeats(6001, 5000);
  ASSERT_EQ(expired, std::vector<std::string>{"n2"});
  EXPECT_FALSE(nodes_.Find("n2")->up());
  EXPECT_NE(nodes_.Find("n2")->down_reason.find("no heartbeat"), std::string::npos);
  EXPECT_TRUE(nodes_.Find("n1")->up());
  EXPECT_TRUE(nodes_.ExpireHeartbeats(6002, 5000).empty()) << "reported once";
}

TEST_F(NodeRegistryTest, HeartbeatsOnlyCountFromTheNodesOwnSession) {
  auto s1 = Session();
  nodes_.Register(Node("n1"), s1, 0);
  auto stranger = Session();
  EXPECT_FALSE(nodes_.Heartbeat("n1", stranger.get(), 10).ok());
  EXPECT_FALSE(nodes_.Heartbeat("nobody", s1.get(), 10).ok());
  EXPECT_EQ(nodes_.OnSessionClosed(s1.get()), "n1");
  EXPECT_FALSE(nodes_.Find("n1")->up());
  EXPECT_EQ(nodes_.Find("n1")->down_reason, "agent disconnected");
}

TEST_F(NodeRegistryTest, ReservationsSurviveReRegistration) {
  nodes_.Register(Node("n1"), Session(), 0);
  v1::Resources r;
  r.set_cores(3);
  r.set_ksps(10);
  r.set_streams(1);
  const Rect rect{1, 1, 3, 1};
  nodes_.Reserve("n1", 0, r, rect);
  nodes_.Register(Node("n1"), Session(), 10);  // the agent reconnects
  const BoardUsage& u = nodes_.Find("n1")->usage[0];
  EXPECT_EQ(u.cores, 3u);
  ASSERT_TRUE(u.grid);
  EXPECT_FALSE(u.grid->free(2, 1)) << "the free map lost a held rectangle";
  EXPECT_EQ(u.grid->free_count(), 16u - 1 - 3);
  EXPECT_EQ(u.largest_live.area(), 12u);  // the dead core (0,0) caps the empty board at 4x3
  nodes_.Release("n1", 0, r, rect);
  nodes_.Release("n1", 0, r, rect);  // never below zero
  EXPECT_EQ(nodes_.Find("n1")->usage[0].cores, 0u);
  EXPECT_TRUE(nodes_.Find("n1")->usage[0].grid->free(2, 1));
  EXPECT_EQ(LiveCores(nodes_.Find("n1")->record.boards(0)), 15u);
}

TEST_F(NodeRegistryTest, ABoardHoldsABoundedNumberOfMarksWhoeverSetsThem) {
  nodes_.Register(Node("n1"), Session(), 0);
  std::map<std::string, std::string> set;
  for (size_t i = 0; i < NodeRegistry::kMaxBoardMarks; ++i) set["m" + std::to_string(i)] = "1";
  ASSERT_TRUE(nodes_.SetMarks("n1", 0, set, {}).ok());
  // A calibration job's new name past the bound is not marked; one it already has is updated.
  EXPECT_EQ(nodes_.Mark("n1", 0, "calibrated_at", "2026-11-28T03:00:00Z"), nullptr);
  ASSERT_NE(nodes_.Mark("n1", 0, "m0", "2"), nullptr);
  EXPECT_EQ(nodes_.Find("n1")->record.board_marks().at(0).values().at("m0"), "2");
  // An operator's change past it is refused whole; unmarking makes room.
  Status over = nodes_.SetMarks("n1", 0, {{"m0", "3"}, {"extra", "1"}}, {});
  EXPECT_EQ(over.message(), "board n1/0 would have 65 marks; it holds at most 64");
  EXPECT_EQ(nodes_.Find("n1")->record.board_marks().at(0).values().at("m0"), "2");
  EXPECT_EQ(nodes_.SetMarks("n1", 0, {}, {"m1", "m1"}).message(), "attribute 'm1' is given twice");
  EXPECT_EQ(nodes_.SetMarks("n1", 0, {{"m1", "x"}}, {"m1"}).message(),
            "attribute 'm1' is both marked and unmarked");
  ASSERT_TRUE(nodes_.SetMarks("n1", 0, {{"extra", "1"}}, {"m1"}).ok());
  EXPECT_EQ(nodes_.Find("n1")->record.board_marks().at(0).values().size(),
            NodeRegistry::kMaxBoardMarks);
}

}  // namespace
}  // namespace snn
