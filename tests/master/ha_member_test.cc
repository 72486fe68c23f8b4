// The master's HA mode on an in-memory etcd and a manual clock: election, lease loss, deposition
// with a fenced write, lost and held-back writes, and a standby's catch-up. No etcd is needed.
#include "master/ha/ha_member.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/base/clock.h"
#include "master/ha/ha_store.h"
#include "master/ha/replicated_log.h"
#include "master/store/journal.h"
#include "master/store/memory_store.h"
#include "master/store/replica_position.h"
#include "tests/test_util/fake_etcd.h"

namespace snn {
namespace {

constexpr char kPrefix[] = "/snn/";

// Waits (in real time, bounded) for a condition another thread makes true.
bool Eventually(const std::function<bool()>& condition) {
  const Stopwatch waited;
  while (!condition()) {
    if (waited.Seconds() > 30) return false;
    std::this_thread::yield();
  }
  return true;
}

// One master of the group: its own connection to etcd, its own store, what ended it.
class Master {
 public:
  Master(FakeEtcdServer& server, ManualClock& clock, const std::string& name) : etcd(server) {
    auto local = std::make_unique<MemoryStore>();
    local_ = local.get();
    store = std::make_unique<HaStore>(
        std::move(local), etcd, clock, kPrefix,
        [this] { return member != nullptr && member->LeaseValid(); },
        [this](const std::string& why) { Lose(why); });
    HaOptions options;
    options.prefix = kPrefix;
    options.member = name;
    options.advertise = name + ":7000";
    options.lease_ttl_s = 5;
    member = std::make_unique<HaMember>(etcd, *store, clock, options,
                                        [this](const std::string& why) { Lose(why); });
  }
  ~Master() {
    member->Stop();
    if (campaign_.valid()) campaign_.wait();
    store->Close();
  }

  void StartCampaign() {
    campaign_ = std::async(std::launch::async, [this] { return member->Campaign(); });
  }
  // Waits for the campaign's outcome.
  Status Elected() { return campaign_.get(); }
  bool campaign_done() {
    return campaign_.valid() &&
           campaign_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

  // Commits `writes` and waits for the answer.
  Status CommitAndWait(StoreBatch writes) { return CommitAsync(std::move(writes)).get(); }
  std::future<Status> CommitAsync(StoreBatch writes) {
    auto done = std::make_shared<std::promise<Status>>();
    auto answer = done->get_future();
    store->Commit(std::move(writes), [done](Status s) { done->set_value(std::move(s)); });
    return answer;
  }

  std::optional<std::string> Local(const std::string& key) {
    auto value = local_->Get(key);
    return value.ok() ? *value : std::nullopt;
  }
  std::string lost() {
    std::lock_guard lock(mu_);
    return lost_;
  }

  FakeEtcd etcd;
  std::unique_ptr<HaStore> store;
  std::unique_ptr<HaMember> member;

 private:
  void Lose(const std::string& why) {
    std::lock_guard lock(mu_);
    if (lost_.empty()) lost_ = why;
  }

  MemoryStore* local_ = nullptr;  // owned by store
  std::future<Status> campaign_;
  std::mutex mu_;
  std::string lost_;  // guarded by mu_: the first reason this master stopped leading
};

StoreBatch Put(const std::string& key, const std::string& value) {
  return {StoreWrite{key, value}};
}

class HaMemberTest : public ::testing::Test {
 protected:
  // Moves the clock in 50 ms steps until `condition` holds (false after `max_ms`). Before each
  // step every loop of `masters` has armed its next pause (a standby runs three: renewal, lease
  // guard, leader watch; a leader a fourth, the compactor), so that time never runs ahead of
  // a loop that has yet to renew a lease.
  bool AdvanceUntil(const std::function<bool()>& condition, std::vector<Master*> masters,
                    int64_t max_ms = 60000) {
    auto loops = [&] {
      size_t n = 0;
      for (Master* m : masters) n += m->member->leading() ? 4 : 3;
      return n;
    };
    for (int64_t moved = 0; moved <= max_ms; moved += 50) {
      if (!Eventually([&] { return condition() || clock_.pending_calls() >= loops(); })) {
        ADD_FAILURE() << "the members' loops did not settle: " << clock_.pending_calls()
                      << " pauses armed, " << loops() << " expected";
        return false;
      }
      if (condition()) return true;
      clock_.AdvanceMs(50);
    }
    return condition();
  }

  std::vector<std::string> LogKeys() { return server_.KeysWithPrefix(LogPrefix(kPrefix)); }

  // Writes batch `seq` into the log as the leader of `epoch` would, without its fence.
  void WriteBatch(Master& via, uint64_t seq, int64_t epoch, StoreBatch writes) {
    writes.push_back(StoreWrite{kAppliedSeqKey, Hex16(seq)});
    for (auto& [key, value] : EncodeBatch(kPrefix, writes, seq, epoch, 1000)) {
      etcdserverpb::PutRequest put;
      put.set_key(key);
      put.set_value(value);
      ASSERT_TRUE(via.etcd.Put(put).ok());
    }
  }
  // The epoch of the leader that wrote the first batch of the log.
  int64_t FirstEpoch() {
    const std::string key = LogKeys().at(0);  // <prefix>log/<seq>/<epoch>/<part>
    const size_t from = LogPrefix(kPrefix).size() + 17;
    return static_cast<int64_t>(std::stoull(key.substr(from, 16), nullptr, 16));
  }

  ManualClock clock_;
  FakeEtcdServer server_{clock_};
};

TEST_F(HaMemberTest, OneLeadsAndTheStandbyFollowsItsLog) {
  Master a(server_, clock_, "a");
  Master b(server_, clock_, "b");
  ASSERT_TRUE(a.member->Start().ok());
  ASSERT_TRUE(b.member->Start().ok());
  a.StartCampaign();
  ASSERT_TRUE(a.Elected().ok());
  EXPECT_TRUE(a.member->leading());
  b.StartCampaign();

  ASSERT_TRUE(a.CommitAndWait(Put("job/1", "one")).ok());
  ASSERT_TRUE(a.CommitAndWait(Put("job/2", "two")).ok());
  EXPECT_EQ(a.Local("job/2"), "two");
  ASSERT_TRUE(Eventually([&] { return b.member->applied_seq() == 2; }));
  EXPECT_EQ(b.Local("job/1"), "one");
  EXPECT_EQ(b.Local("job/2"), "two");
  // The standby learns where the leader is (for its redirects), and does not lead.
  ASSERT_TRUE(AdvanceUntil([&] { return b.member->leader_address() == "a:7000"; }, {&a, &b}));
  EXPECT_FALSE(b.campaign_done());
  EXPECT_FALSE(b.member->leading());
  // A standby writes nothing.
  EXPECT_EQ(b.CommitAndWait(Put("job/3", "x")).code(), Code::kFailedPrecondition);
  EXPECT_EQ(a.lost(), "");
  EXPECT_EQ(b.lost(), "");
}

TEST_F(HaMemberTest, AStandbyAppliesBatchesThatLandOutOfOrderInTheirOrder) {
  Master a(server_, clock_, "a");
  Master b(server_, clock_, "b");
  ASSERT_TRUE(a.member->Start().ok());
  ASSERT_TRUE(b.member->Start().ok());
  a.StartCampaign();
  ASSERT_TRUE(a.Elected().ok());
  ASSERT_TRUE(a.CommitAndWait(Put("job/1", "one")).ok());
  ASSERT_TRUE(Eventually([&] { return b.member->applied_seq() == 1; }));
  // With several groups in flight, batch 3 can land before batch 2.
  const int64_t epoch = FirstEpoch();
  WriteBatch(a, 3, epoch, Put("job/3", "three"));
  WriteBatch(a, 2, epoch, Put("job/2", "two"));
  ASSERT_TRUE(Eventually([&] { return b.member->applied_seq() == 3; }));
  EXPECT_EQ(b.Local("job/2"), "two");
  EXPECT_EQ(b.Local("job/3"), "three");
  EXPECT_EQ(b.Local(kAppliedSeqKey), Hex16(3));
}

TEST_F(HaMemberTest, ANewLeaderDropsWhatItsPredecessorWroteBeyondAGap) {
  Master a(server_, clock_, "a");
  Master b(server_, clock_, "b");
  ASSERT_TRUE(a.member->Start().ok());
  ASSERT_TRUE(b.member->Start().ok());
  a.StartCampaign();
  ASSERT_TRUE(a.Elected().ok());
  ASSERT_TRUE(a.CommitAndWait(Put("job/1", "one")).ok());
  ASSERT_TRUE(Eventually([&] { return b.member->applied_seq() == 1; }));
  // a dies with batch 3 in etcd and batch 2 not: 3 was never acknowledged (2 came first).
  WriteBatch(a, 3, FirstEpoch(), Put("job/3", "never acknowledged"));
  b.StartCampaign();
  a.member->Stop();
  ASSERT_TRUE(b.Elected().ok());
  EXPECT_EQ(b.member->applied_seq(), 1u);
  EXPECT_EQ(b.Local("job/3"), std::nullopt);
  ASSERT_TRUE(b.CommitAndWait(Put("job/2", "two")).ok());
  EXPECT_EQ(LogKeys().size(), 2u) << "batch 3 of the old leader is still in the log";
  // A master that starts now reads the log from the start: batches 1 and 2, nothing else.
  Master c(server_, clock_, "c");
  ASSERT_TRUE(c.member->Start().ok());
  ASSERT_TRUE(Eventually([&] { return c.member->applied_seq() == 2; }));
  EXPECT_EQ(c.Local("job/2"), "two");
  EXPECT_EQ(c.Local("job/3"), std::nullopt);
}

TEST_F(HaMemberTest, ALeaderCutOffFromEtcdStopsBeforeItsLeaseCanExpireThere) {
  Master a(server_, clock_, "a");
  ASSERT_TRUE(a.member->Start().ok());
  a.StartCampaign();
  ASSERT_TRUE(a.Elected().ok());
  ASSERT_TRUE(a.CommitAndWait(Put("job/1", "one")).ok());

  a.etcd.SetUnreachable(true);
  // The lease was last renewed when it was granted (the clock has not moved): with a 5 s TTL
  // the member counts on it for 4 s (a fifth kept as margin), not a millisecond more.
  clock_.AdvanceMs(3999);
  EXPECT_TRUE(a.member->LeaseValid());
  clock_.AdvanceMs(1);
  EXPECT_FALSE(a.member->LeaseValid());
  ASSERT_TRUE(AdvanceUntil([&] { return !a.lost().empty(); }, {&a}, 1000));
  EXPECT_NE(a.lost().find("lease"), std::string::npos) << a.lost();
  // And it writes nothing more: the write fails without reaching etcd.
  EXPECT_FALSE(a.CommitAndWait(Put("job/2", "two")).ok());
  a.etcd.SetUnreachable(false);
  EXPECT_EQ(LogKeys().size(), 1u);
  EXPECT_EQ(a.Local("job/2"), std::nullopt);
}

TEST_F(HaMemberTest, WhenTheLeadersLeaseExpiresTheStandbyTakesOverWithEveryAcknowledgedWrite) {
  Master a(server_, clock_, "a");
  Master b(server_, clock_, "b");
  ASSERT_TRUE(a.member->Start().ok());
  ASSERT_TRUE(b.member->Start().ok());
  a.StartCampaign();
  ASSERT_TRUE(a.Elected().ok());
  b.StartCampaign();
  ASSERT_TRUE(a.CommitAndWait(Put("job/1", "one")).ok());

  const int64_t lease = server_.LeaderLease(LeaderElectionName(kPrefix));
  ASSERT_NE(lease, 0);
  server_.ExpireLease(lease);
  ASSERT_TRUE(b.Elected().ok());
  EXPECT_EQ(b.Local("job/1"), "one");
  ASSERT_TRUE(b.CommitAndWait(Put("job/2", "two")).ok());
  // The old leader learns it at its next renewal and stops.
  ASSERT_TRUE(AdvanceUntil([&] { return !a.lost().empty(); }, {&a, &b}));
  EXPECT_FALSE(a.CommitAndWait(Put("job/3", "three")).ok());
  EXPECT_EQ(b.Local("job/3"), std::nullopt);
  EXPECT_EQ(LogKeys().size(), 2u);
}

TEST_F(HaMemberTest, ADeposedLeadersNextWriteIsFencedOff) {
  Master a(server_, clock_, "a");
  Master b(server_, clock_, "b");
  ASSERT_TRUE(a.member->Start().ok());
  ASSERT_TRUE(b.member->Start().ok());
  a.StartCampaign();
  ASSERT_TRUE(a.Elected().ok());
  ASSERT_TRUE(a.CommitAndWait(Put("job/1", "one")).ok());

  ASSERT_TRUE(server_.DeposeLeader(LeaderElectionName(kPrefix)));
  Status fenced = a.CommitAndWait(Put("job/2", "two"));
  EXPECT_EQ(fenced.code(), Code::kUnavailable) << fenced.ToString();
  EXPECT_NE(a.lost().find("deposed"), std::string::npos) << a.lost();
  EXPECT_EQ(a.Local("job/2"), std::nullopt);
  EXPECT_EQ(LogKeys().size(), 1u) << "the fenced write reached the log";
  // Every later write is refused at once.
  EXPECT_FALSE(a.CommitAndWait(Put("job/3", "three")).ok());

  b.StartCampaign();
  ASSERT_TRUE(b.Elected().ok());
  EXPECT_EQ(b.Local("job/1"), "one");
  EXPECT_EQ(b.Local("job/2"), std::nullopt);
  ASSERT_TRUE(b.CommitAndWait(Put("job/2", "b's")).ok());
  EXPECT_EQ(b.Local("job/2"), "b's");
}

TEST_F(HaMemberTest, ADeposedLeaderWithNothingToWriteStopsToo) {
  Master a(server_, clock_, "a");
  ASSERT_TRUE(a.member->Start().ok());
  a.StartCampaign();
  ASSERT_TRUE(a.Elected().ok());
  ASSERT_TRUE(server_.DeposeLeader(LeaderElectionName(kPrefix)));
  ASSERT_TRUE(AdvanceUntil([&] { return !a.lost().empty(); }, {&a}));
  EXPECT_NE(a.lost().find("deposed"), std::string::npos) << a.lost();
}

TEST_F(HaMemberTest, AWriteHeldBackWhileItsLeaderWasDeposedIsFencedWhenItArrives) {
  Master a(server_, clock_, "a");
  Master b(server_, clock_, "b");
  ASSERT_TRUE(a.member->Start().ok());
  ASSERT_TRUE(b.member->Start().ok());
  a.StartCampaign();
  ASSERT_TRUE(a.Elected().ok());
  ASSERT_TRUE(a.CommitAndWait(Put("job/1", "one")).ok());

  a.etcd.HoldWrites();
  auto late = a.CommitAsync(Put("job/2", "a's"));
  ASSERT_TRUE(Eventually([&] { return a.etcd.held_writes() == 1; }));
  ASSERT_TRUE(server_.DeposeLeader(LeaderElectionName(kPrefix)));
  b.StartCampaign();
  ASSERT_TRUE(b.Elected().ok());
  ASSERT_TRUE(b.CommitAndWait(Put("job/2", "b's")).ok());

  a.etcd.ReleaseWrites();
  EXPECT_EQ(late.get().code(), Code::kUnavailable);
  EXPECT_NE(a.lost().find("deposed"), std::string::npos) << a.lost();
  EXPECT_EQ(a.Local("job/2"), std::nullopt);
  EXPECT_EQ(b.Local("job/2"), "b's");
  EXPECT_EQ(LogKeys().size(), 2u);
}

TEST_F(HaMemberTest, AWriteWhoseAnswerWasLostIsRetriedAsTheSameRecord) {
  Master a(server_, clock_, "a");
  Master b(server_, clock_, "b");
  ASSERT_TRUE(a.member->Start().ok());
  ASSERT_TRUE(b.member->Start().ok());
  a.StartCampaign();
  ASSERT_TRUE(a.Elected().ok());

  a.etcd.DropAnswersAfter(1);  // applied in etcd, but a hears an error
  auto answered = a.CommitAsync(Put("job/1", "one"));
  ASSERT_TRUE(AdvanceUntil(
      [&] { return answered.wait_for(std::chrono::seconds(0)) == std::future_status::ready; },
      {&a, &b}));
  EXPECT_TRUE(answered.get().ok());
  a.etcd.DropWritesBefore(1);  // lost before it applied: retried too
  auto second = a.CommitAsync(Put("job/2", "two"));
  ASSERT_TRUE(AdvanceUntil(
      [&] { return second.wait_for(std::chrono::seconds(0)) == std::future_status::ready; },
      {&a, &b}));
  EXPECT_TRUE(second.get().ok());

  EXPECT_EQ(LogKeys().size(), 2u);
  ASSERT_TRUE(Eventually([&] { return b.member->applied_seq() == 2; }));
  EXPECT_EQ(b.Local("job/1"), "one");
  EXPECT_EQ(b.Local("job/2"), "two");
  EXPECT_EQ(a.lost(), "");
}

TEST_F(HaMemberTest, AStandbyThatJoinsLateCatchesUpAndLeadsFromWhereTheLogEnds) {
  Master a(server_, clock_, "a");
  ASSERT_TRUE(a.member->Start().ok());
  a.StartCampaign();
  ASSERT_TRUE(a.Elected().ok());
  for (int i = 1; i <= 20; ++i) {
    ASSERT_TRUE(a.CommitAndWait(Put("job/" + std::to_string(i), std::to_string(i))).ok());
  }

  Master b(server_, clock_, "b");
  ASSERT_TRUE(b.member->Start().ok());
  ASSERT_TRUE(Eventually([&] { return b.member->applied_seq() == 20; }));
  for (int i = 1; i <= 20; ++i) EXPECT_EQ(b.Local("job/" + std::to_string(i)), std::to_string(i));
  ASSERT_TRUE(a.CommitAndWait(Put("job/21", "21")).ok());  // and follows what comes next
  ASSERT_TRUE(Eventually([&] { return b.member->applied_seq() == 21; }));

  b.StartCampaign();
  a.member->Stop();  // resigns: b takes over at once
  ASSERT_TRUE(b.Elected().ok());
  ASSERT_TRUE(b.CommitAndWait(Put("job/22", "22")).ok());
  auto seq = ReadAppliedSeq(b.store->local());
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(*seq, 22u);
  EXPECT_EQ(LogKeys().size(), 22u);
}

TEST_F(HaMemberTest, AStandbyWhoseWatchWasCompactedAwayReadsTheLogAgain) {
  Master a(server_, clock_, "a");
  Master b(server_, clock_, "b");
  ASSERT_TRUE(a.member->Start().ok());
  ASSERT_TRUE(b.member->Start().ok());
  a.StartCampaign();
  ASSERT_TRUE(a.Elected().ok());
  ASSERT_TRUE(a.CommitAndWait(Put("job/1", "one")).ok());
  ASSERT_TRUE(Eventually([&] { return b.member->applied_seq() == 1; }));

  b.etcd.PauseWatches(true);  // b's watch falls behind...
  ASSERT_TRUE(a.CommitAndWait(Put("job/2", "two")).ok());
  ASSERT_TRUE(a.CommitAndWait(Put("job/3", "three")).ok());
  ASSERT_TRUE(a.etcd.Compact(server_.revision()).ok());  // ...past what etcd keeps
  b.etcd.PauseWatches(false);
  ASSERT_TRUE(AdvanceUntil([&] { return b.member->applied_seq() == 3; }, {&a, &b}, 3000));
  EXPECT_EQ(b.Local("job/3"), "three");
}

}  // namespace
}  // namespace snn
