// Connection slots by address and owner: a flood of anonymous connections from one address evicts
// its own oldest instead of locking the address out; a user over their cap hurts only themself;
// the total cap still lets a quiet address in.
#include "common/rpc/peer_slots.h"

#include <gtest/gtest.h>

namespace snn {
namespace {

constexpr char kLogin[] = "10.0.0.5";

TEST(PeerSlotsTest, AnAnonymousFloodEvictsItsOldestInsteadOfLockingTheAddressOut) {
  PeerSlots slots(PeerSlotLimits{4096, 4, /*anonymous*/ 3, /*per owner*/ 256});
  for (PeerSlots::Id id = 1; id <= 3; ++id) {
    const auto a = slots.Admit(id, kLogin, int64_t(id));
    EXPECT_TRUE(a.admitted);
    EXPECT_FALSE(a.evicted);
  }
  const auto fourth = slots.Admit(4, kLogin, 4);  // another user of the login node
  EXPECT_TRUE(fourth.admitted);
  ASSERT_TRUE(fourth.evicted);
  EXPECT_EQ(*fourth.evicted, 1u);
  EXPECT_EQ(slots.anonymous(kLogin), 3u);
  EXPECT_EQ(slots.Own(4, "uid 1000"), "")
      << "it proves who it is and no longer counts as anonymous";
  EXPECT_EQ(slots.anonymous(kLogin), 2u);
  EXPECT_EQ(slots.owned(kLogin, "uid 1000"), 1u);
  // The flood goes on; the proven connection is never the one evicted.
  for (PeerSlots::Id id = 5; id <= 20; ++id) {
    const auto a = slots.Admit(id, kLogin, int64_t(id));
    ASSERT_TRUE(a.admitted);
    if (a.evicted) {
      EXPECT_NE(*a.evicted, 4u);
    }
  }
  EXPECT_EQ(slots.owned(kLogin, "uid 1000"), 1u);
  EXPECT_EQ(slots.anonymous("10.0.0.6"), 0u) << "other addresses are not counted";
}

TEST(PeerSlotsTest, OneOwnerOverItsCapIsRefusedAndOthersAreNot) {
  PeerSlots slots(PeerSlotLimits{4096, 4, 64, /*per owner*/ 2});
  ASSERT_TRUE(slots.Admit(1, kLogin, 0).admitted);
  ASSERT_TRUE(slots.Admit(2, kLogin, 0).admitted);
  ASSERT_TRUE(slots.Admit(3, kLogin, 0).admitted);
  ASSERT_TRUE(slots.Admit(4, kLogin, 0).admitted);
  EXPECT_EQ(slots.Own(1, "uid 66"), "");
  EXPECT_EQ(slots.Own(2, "uid 66"), "");
  const std::string refused = slots.Own(3, "uid 66");
  EXPECT_NE(refused.find("2 connections of uid 66 are open from 10.0.0.5"), std::string::npos)
      << refused;
  EXPECT_EQ(slots.Own(4, "uid 1000"), "") << "another user of the same address is not affected";
  EXPECT_EQ(slots.Own(4, "uid 66"), "") << "a connection's owner is set once";
  EXPECT_EQ(slots.owned(kLogin, "uid 1000"), 1u);
  slots.Release(3);
  slots.Release(1);
  ASSERT_TRUE(slots.Admit(5, kLogin, 0).admitted);
  EXPECT_EQ(slots.Own(5, "uid 66"), "") << "room again once some are closed";
  slots.Release(2);
  slots.Release(4);
  slots.Release(5);
  EXPECT_EQ(slots.total(), 0u);
  EXPECT_EQ(slots.owned(kLogin, "uid 66"), 0u);
}

TEST(PeerSlotsTest, TheTotalCapStillAdmitsAQuietAddress) {
  PeerSlots slots(PeerSlotLimits{/*total*/ 4, /*always admit*/ 2, 64, 256});
  for (PeerSlots::Id id = 1; id <= 4; ++id) ASSERT_TRUE(slots.Admit(id, kLogin, 0).admitted);
  const auto more = slots.Admit(5, kLogin, 0);
  EXPECT_FALSE(more.admitted);
  EXPECT_NE(more.refusal.find("4 connections are open"), std::string::npos);
  EXPECT_TRUE(slots.Admit(6, "10.0.0.9", 0).admitted) << "fewer than 2 open from it";
  EXPECT_TRUE(slots.Admit(7, "10.0.0.9", 0).admitted);
  EXPECT_FALSE(slots.Admit(8, "10.0.0.9", 0).admitted);
}

TEST(PeerSlotsTest, AnonymousConnectionsPastTheirTimeAreFoundOldestFirst) {
  PeerSlots slots(PeerSlotLimits{});
  ASSERT_TRUE(slots.Admit(1, kLogin, 100).admitted);
  ASSERT_TRUE(slots.Admit(2, "10.0.0.9", 150).admitted);
  ASSERT_TRUE(slots.Admit(3, kLogin, 200).admitted);
  ASSERT_TRUE(slots.Admit(4, kLogin, 300).admitted);
  slots.Own(3, "uid 1");
  std::vector<PeerSlots::Id> old = slots.AnonymousSince(250);
  std::sort(old.begin(), old.end());
  EXPECT_EQ(old, (std::vector<PeerSlots::Id>{1, 2}));
}

}  // namespace
}  // namespace snn
