// The queue order between two full orders: the head a quick pass sees is what a full order
// would give at the same moment, whatever jobs came, changed or left since.
#include "master/sched/queue_order.h"

#include <gtest/gtest.h>

#include <random>

#include "master/jobs/job_table.h"
#include "master/sched/policy_config.h"
#include "tests/master/test_jobs.h"

namespace snn {
namespace {

using testing_helpers::PendingJob;

std::vector<uint64_t> Ids(const SchedulerViews& views, const std::vector<uint32_t>& slots) {
  std::vector<uint64_t> ids;
  for (uint32_t slot : slots) ids.push_back(views.pending()[slot].job.id);
  return ids;
}

class QueueOrderTest : public ::testing::Test {
 protected:
  QueueOrderTest() { order_.Configure(DefaultSchedulingConfig()); }

  uint64_t Submit(const std::string& tenant, int32_t priority, int64_t submit_ms,
                  uint32_t cores = 1) {
    v1::JobRecord job = PendingJob(table_, "default", cores, priority);
    job.set_tenant(tenant);
    job.set_submit_ms(submit_ms);
    return table_.Insert(std::move(job)).id();
  }
  std::vector<uint64_t> FullOrder(int64_t now_ms) {
    return Ids(table_.views(), order_.Order(table_.views(), {}, {{"default", 64}}, now_ms));
  }
  std::vector<uint64_t> Head(size_t depth) {
    return Ids(table_.views(), order_.OrderHead(table_.views(), depth));
  }

  JobTable table_;
  QueueOrder order_;
};

TEST_F(QueueOrderTest, WithoutAFullOrderThereIsNoHead) {
  Submit("a", 5, 0);
  EXPECT_FALSE(order_.has_order());
  EXPECT_TRUE(Head(10).empty());
}

TEST_F(QueueOrderTest, NewJobsAreMergedByPriorityAndDepthIsHonoured) {
  const uint64_t low = Submit("a", -500, 0);
  const uint64_t mid = Submit("a", 0, 0);
  FullOrder(1000);
  const uint64_t high = Submit("a", 900, 1000);
  const uint64_t lower = Submit("a", -900, 1000);
  EXPECT_EQ(Head(10), (std::vector<uint64_t>{high, mid, low, lower}));
  EXPECT_EQ(Head(2), (std::vector<uint64_t>{high, mid}));
}

// The pass reads each pending job's priority and starvation from its PendingJob (backfill past a
// starving job's reservation goes by priority): the order sets them as it ranks.
TEST_F(QueueOrderTest, EachPendingJobCarriesItsPriorityAndWhetherItStarves) {
  const uint64_t old_job = Submit("a", 0, 0);
  const uint64_t young = Submit("a", 500, 6 * 3'600'000);
  FullOrder(6 * 3'600'000 + 1000);  // the old one waited past the 5 h guard
  const SchedulerViews& views = table_.views();
  for (uint64_t id : {old_job, young}) {
    const PendingEntry& e = views.pending()[views.PendingSlotOf(id)];
    EXPECT_EQ(e.job.priority, e.factors.total) << id;
    EXPECT_EQ(e.job.starving, id == old_job) << id;
  }
  EXPECT_NE(views.pending()[views.PendingSlotOf(young)].job.priority, 0);
}

TEST_F(QueueOrderTest, TheHeadIsWhatAFullOrderGivesAtTheSameMoment) {
  std::mt19937 rng(7);
  const std::vector<std::string> tenants = {"a", "b", "c"};
  // Every tenant keeps work waiting throughout, so that a full order's shares do not change.
  std::vector<uint64_t> kept, ids;
  for (const auto& t : tenants) kept.push_back(Submit(t, 0, 0));
  const int64_t now = 50'000;
  for (int round = 0; round < 30; ++round) {
    FullOrder(now);
    for (int step = 0; step < 40; ++step) {
      const int what = static_cast<int>(rng() % 4);
      if (what <= 1 || ids.empty()) {  // a new job
        ids.push_back(Submit(tenants[rng() % tenants.size()],
                             static_cast<int32_t>(rng() % 2001) - 1000,
                             static_cast<int64_t>(rng() % now), 1 + rng() % 7));
      } else if (what == 2) {  // one leaves the queue (starts, or is cancelled)
        const size_t k = rng() % ids.size();
        v1::JobRecord* job = table_.Find(ids[k]);
        table_.SetState(*job, rng() % 2 ? v1::RUNNING : v1::CANCELLED, now, "test");
        ids.erase(ids.begin() + static_cast<ptrdiff_t>(k));
      } else {  // one changes its priority while it waits
        const size_t k = rng() % (ids.size() + kept.size());
        v1::JobRecord* job = table_.Find(k < ids.size() ? ids[k] : kept[k - ids.size()]);
        job->mutable_spec()->set_priority(static_cast<int32_t>(rng() % 2001) - 1000);
        table_.views().Put(*job);
      }
      const size_t depth = 1 + rng() % 12;
      std::vector<uint64_t> head = Head(depth);
      // A full order now (which also starts the next round's) ranks them the same.
      QueueOrder fresh;
      fresh.Configure(DefaultSchedulingConfig());
      std::vector<uint64_t> all =
          Ids(table_.views(), fresh.Order(table_.views(), {}, {{"default", 64}}, now));
      all.resize(std::min(all.size(), depth));
      ASSERT_EQ(head, all) << "round " << round << " step " << step;
    }
  }
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

constexpr int64_t kHour = 3'600'000;

TEST(AccrualLimitTest, OnlyEachTenantsFirstJobsCountTheirWait) {
  AccrualLimit accrual;
  accrual.set_per_tenant(2);
  // Tenant 0 queues four jobs at 0; tenant 1 one at 1 h.
  std::vector<AccrualLimit::PendingJob> pending = {
      {0, 0, 1}, {0, 0, 2}, {0, 0, 3}, {0, 0, 4}, {1, kHour, 5}};
  accrual.Update(pending, 2 * kHour);
  EXPECT_EQ(accrual.CountedWait(1, 0, 2 * kHour), 2 * kHour);
  EXPECT_EQ(accrual.CountedWait(2, 0, 2 * kHour), 2 * kHour);
  EXPECT_EQ(accrual.CountedWait(3, 0, 2 * kHour), 0);
  EXPECT_EQ(accrual.CountedWait(4, 0, 5 * kHour), 0);  // however long it waits
  EXPECT_EQ(accrual.CountedWait(5, kHour, 2 * kHour), kHour);
  // Job 1 starts at 3 h: job 3 moves up and accrues from then; job 4 still does not.
  pending.erase(pending.begin());
  accrual.Update(pending, 3 * kHour);
  EXPECT_EQ(accrual.CountedWait(2, 0, 4 * kHour), 4 * kHour);
  EXPECT_EQ(accrual.CountedWait(3, 0, 4 * kHour), kHour);
  EXPECT_EQ(accrual.CountedWait(4, 0, 4 * kHour), 0);
  // A job that came since the last update counts from its submit time until the next.
  EXPECT_EQ(accrual.CountedWait(9, 3 * kHour + 1, 4 * kHour), kHour - 1);
  // Off: every job counts its whole wait.
  accrual.set_per_tenant(0);
  EXPECT_EQ(accrual.CountedWait(4, 0, 4 * kHour), 4 * kHour);
}

TEST(AccrualLimitTest, ATenantsFloodNoLongerGoesAheadOfAnotherTenantsJob) {
  JobTable table;
  auto submit = [&](const std::string& tenant, int64_t at) {
    v1::JobRecord job = PendingJob(table, "default", 1, 0);
    job.set_tenant(tenant);
    job.set_submit_ms(at);
    return table.Insert(std::move(job)).id();
  };
  std::vector<uint64_t> flood;
  for (int i = 0; i < 10; ++i) flood.push_back(submit("flood", 0));
  const uint64_t other = submit("other", kHour / 2);
  // At 6 h every job is past the 5 h starvation guard: oldest first, the flood ahead.
  v1::SchedulingConfig config = DefaultSchedulingConfig();
  auto order_at = [&](const v1::SchedulingConfig& c, int64_t now) {
    QueueOrder order;
    order.Configure(c);
    return Ids(table.views(), order.Order(table.views(), {}, {{"default", 64}}, now));
  };
  std::vector<uint64_t> plain = order_at(config, 6 * kHour);
  EXPECT_EQ(plain.back(), other);
  // With two accruing jobs per tenant, the flood's third and later jobs have waited nothing
  // that counts: the other tenant's job goes right after the flood's first two.
  config.mutable_priority()->set_accrue_per_tenant(2);
  std::vector<uint64_t> limited = order_at(config, 6 * kHour);
  ASSERT_EQ(limited.size(), 11u);
  EXPECT_EQ(limited[0], flood[0]);
  EXPECT_EQ(limited[1], flood[1]);
  EXPECT_EQ(limited[2], other);
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

// The slowdown factor counts a job's wait against how long it is expected to run: as long as
// its user's last two jobs ran (at most its limit); a user with no history, its limit.
TEST(QueueOrderSlowdownTest, TheSlowdownFactorIsWorkedOutOnThePredictedRunTime) {
  JobTable table;
  QueueOrder order;
  order.Configure(DefaultSchedulingConfig());
  auto submit = [&](const std::string& user, int64_t submit_ms) {
    v1::JobRecord job = testing_helpers::PendingJob(table, "default", 1);
    job.set_tenant(user);
    job.mutable_spec()->set_user(user);
    job.mutable_spec()->set_time_limit_s(3600);
    job.set_submit_ms(submit_ms);
    return &table.Insert(std::move(job));
  };
  // Alice's two jobs ran 60 s each; Bob has none that ended.
  for (int64_t start : {0, 100'000}) {
    v1::JobRecord* done = submit("alice", start);
    table.SetState(*done, v1::RUNNING, start, "started");
    table.SetState(*done, v1::COMPLETED, start + 60'000, "done");
  }
  const uint64_t alice = submit("alice", 200'000)->id();
  const uint64_t bob = submit("bob", 200'000)->id();
  order.Order(table.views(), {}, {{"default", 64}}, 260'000);        // both waited 60 s
  EXPECT_NEAR(table.views().FactorsOf(alice)->slowdown, 0.5, 1e-9);  // 1 - 60 / (60 + 60)
  EXPECT_NEAR(table.views().FactorsOf(bob)->slowdown, 60.0 / 3660, 1e-9);
}

}  // namespace
}  // namespace snn
