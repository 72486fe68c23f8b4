// The account tree (issue 40): nominal shares, borrowing and lending limits down a tree of
// tenants, the scheduler keeping to them whatever jobs come and go, and a subtree under its
// share taking back what it lent within one pass once the preemption grace has passed.
#include "master/sched/quota_tree.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <map>
#include <random>

#include "master/policy/policy_file.h"
#include "master/sched/fair_tree.h"
#include "master/sched/policy_config.h"
#include "tests/master/test_jobs.h"

namespace snn {
namespace {

using testing_helpers::Board;

constexpr int64_t kMin = 60'000;

v1::TenantConfig& AddTenant(v1::SchedulingConfig& c, const std::string& name,
                            const std::string& parent, int64_t nominal, int64_t borrowing = -1,
                            int64_t lending = -1) {
  v1::TenantConfig& t = *c.add_tenants();
  t.set_name(name);
  t.set_weight(1);
  t.set_parent(parent);
  v1::PoolCap& cap = *t.add_quotas();
  cap.set_pool("default");
  if (nominal >= 0) cap.set_nominal(static_cast<uint64_t>(nominal));
  if (borrowing >= 0) cap.set_borrowing_limit(static_cast<uint64_t>(borrowing));
  if (lending >= 0) cap.set_lending_limit(static_cast<uint64_t>(lending));
  return t;
}

// inst > {ga > {pa1, pa2}, gb > {pb1}}: ga's 32 and gb's 32.
v1::SchedulingConfig Institute() {
  v1::SchedulingConfig c = DefaultSchedulingConfig();
  AddTenant(c, "inst", "", 0);
  AddTenant(c, "ga", "inst", 16, -1, 8);  // lends at most 8 of its subtree's 32
  AddTenant(c, "pa1", "ga", 8);
  AddTenant(c, "pa2", "ga", 8);
  AddTenant(c, "gb", "inst", 0, 8);  // borrows at most 8
  AddTenant(c, "pb1", "gb", 32);
  return c;
}

TEST(QuotaTreeTest, SharesAddUpTheTreeAndWhatIsNotLentStaysWithItsSubtree) {
  const v1::SchedulingConfig c = Institute();
  ASSERT_TRUE(ValidatePolicy(c).ok()) << ValidatePolicy(c).message();
  auto trees = BuildQuotaTrees(c);
  ASSERT_NE(trees, nullptr);
  const QuotaTree& tree = trees->at("default");
  auto node = [&](const char* name) { return tree.node(tree.Find(name)); };
  EXPECT_EQ(node("ga").quota, 32u);  // its 16 and its projects' 8 + 8
  EXPECT_EQ(node("ga").lent, 8u);
  EXPECT_EQ(node("ga").guaranteed, 24u);
  EXPECT_EQ(node("inst").quota, 40u);  // ga's 8 and gb's 32
  EXPECT_EQ(node("inst").nominal_sum, 64u);
  QuotaTreeUse use(tree);
  const int pb1 = tree.Find("pb1"), pa1 = tree.Find("pa1");
  // gb alone: its 32, ga's 8 lent, nothing more (ga keeps 24; gb's borrowing limit is 8 anyway).
  EXPECT_EQ(use.Available(pb1), 40u);
  EXPECT_TRUE(use.WithinShare(pb1, 32));
  EXPECT_FALSE(use.WithinShare(pb1, 33));
  use.Add(pb1, 40, 1);
  EXPECT_EQ(use.Available(pb1), 0u);
  EXPECT_TRUE(use.Borrows(tree.Find("gb")));
  // What ga did not lend is still there for pa1; what it lent is gb's until taken back.
  EXPECT_EQ(use.Available(pa1), 24u);
  EXPECT_TRUE(use.WithinShare(pa1, 8));  // its share, with what gb borrowed taken back
  EXPECT_FALSE(use.WithinShare(pa1, 9));
  EXPECT_TRUE(use.ReclaimableFrom(pb1, pa1));
  EXPECT_FALSE(use.ReclaimableFrom(pa1, pb1));
  use.Add(pb1, 8, -1);
  EXPECT_FALSE(use.Borrows(tree.Find("gb")));
  EXPECT_FALSE(use.ReclaimableFrom(pb1, pa1));
  EXPECT_NE(use.Explain(pb1, 16, true).find("gb runs 32 on nominal 32 (borrowing at most 8)"),
            std::string::npos)
      << use.Explain(pb1, 16, true);
}

TEST(QuotaTreeTest, APolicyWithABrokenTreeIsRefusedNamingTheTenant) {
  v1::SchedulingConfig c = DefaultSchedulingConfig();
  AddTenant(c, "a", "b", 1);
  AddTenant(c, "b", "a", 1);
  EXPECT_NE(ValidatePolicy(c).message().find("go round in a circle (a > b > a)"), std::string::npos)
      << ValidatePolicy(c).message();
  c = DefaultSchedulingConfig();
  AddTenant(c, "a", "nobody", 1);
  EXPECT_NE(ValidatePolicy(c).message().find("its parent 'nobody' is not a tenant"),
            std::string::npos);
  c = DefaultSchedulingConfig();
  AddTenant(c, "root", "", 1, 4);
  EXPECT_NE(ValidatePolicy(c).message().find("borrowing_limit needs a parent"), std::string::npos);
  c = DefaultSchedulingConfig();
  std::string parent;
  for (int i = 0; i <= kMaxTreeDepth; ++i) {
    AddTenant(c, "l" + std::to_string(i), parent, 1);
    parent = "l" + std::to_string(i);
  }
  EXPECT_NE(ValidatePolicy(c).message().find("more than 8 levels deep"), std::string::npos);
  c = DefaultSchedulingConfig();
  c.mutable_queues(0)->add_pools()->set_pool("default");
  c.mutable_queues(0)->mutable_pools(0)->set_nominal(4);
  EXPECT_NE(ValidatePolicy(c).message().find("are for tenants"), std::string::npos);
}

TEST(QuotaTreeTest, ThePolicyFileReadsTheTreeAndRefusesItsFieldsOnQueues) {
  auto c = ParsePolicyYaml(R"(
tenants:
  - {name: inst}
  - {name: lab, parent: inst, quotas: {main: {nominal: 8, borrowing_limit: 4, lending_limit: 2}}}
)");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->tenants(1).parent(), "inst");
  EXPECT_EQ(c->tenants(1).quotas(0).nominal(), 8u);
  EXPECT_EQ(c->tenants(1).quotas(0).borrowing_limit(), 4u);
  EXPECT_EQ(c->tenants(1).quotas(0).lending_limit(), 2u);
  auto q = ParsePolicyYaml("queues:\n  - {name: default, pools: {main: {nominal: 8}}}\n");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("nominal"), std::string::npos) << q.status().message();
  auto loop = ParsePolicyYaml("tenants:\n  - {name: a, parent: a}\n");
  ASSERT_FALSE(loop.ok());
  EXPECT_NE(loop.status().message().find("go round in a circle (a > a)"), std::string::npos);
}

TEST(FairTreeTest, AGroupThatUsedMoreThanItsSharePullsItsProjectsDown) {
  v1::SchedulingConfig c = DefaultSchedulingConfig();
  AddTenant(c, "ga", "", -1);
  AddTenant(c, "gb", "", -1);
  AddTenant(c, "a1", "ga", -1);
  AddTenant(c, "a2", "ga", -1);
  AddTenant(c, "b1", "gb", -1);
  // ga's two projects used 60 + 0, gb's one 40: ga is over its half.
  std::map<std::string, double> used{{"a1", 60}, {"b1", 40}};
  auto usage = [&](const std::string& t) { return used.count(t) ? used.at(t) : 0.0; };
  auto terms = FairShareDownTheTree(c, {"a1", "a2", "b1"}, usage, 100);
  EXPECT_DOUBLE_EQ(terms["a1"].weight_share, 0.25);
  EXPECT_DOUBLE_EQ(terms["b1"].weight_share, 0.5);
  // a2 used nothing, but inherits half of its group's over-use: 0 + (0.6 - 0) x 1/2.
  EXPECT_DOUBLE_EQ(terms["a2"].usage_share, 0.3);
  EXPECT_DOUBLE_EQ(terms["a1"].usage_share, 0.6);
  EXPECT_DOUBLE_EQ(terms["b1"].usage_share, 0.4);
  // So b1 (under its group's share) goes before a2 (idle, in the group over its share).
  auto factor = [](const ShareTerms& t) { return std::exp2(-t.usage_share / t.weight_share); };
  EXPECT_GT(factor(terms["b1"]), factor(terms["a2"]));
  // Without parents it is the flat fair share: share = weight / all, usage = own / all.
  v1::SchedulingConfig flat = DefaultSchedulingConfig();
  AddTenant(flat, "x", "", -1);
  AddTenant(flat, "y", "", -1);
  auto f = FairShareDownTheTree(flat, {"x", "z"}, usage, 100);
  EXPECT_DOUBLE_EQ(f["x"].weight_share, 1.0 / 3);  // x, y and z (undeclared, weight 1)
  EXPECT_DOUBLE_EQ(f["z"].usage_share, 0);
}

// Jobs coming and going through the real scheduler pass, on 8 boards of 16 cores.
class TreeCluster {
 public:
  explicit TreeCluster(const v1::SchedulingConfig& c) : config_(c) {
    policy_ = ToSchedulerPolicy(c);
    policy_.preempt_grace_ms = kMin;
    for (const auto& t : c.tenants()) parent_[t.name()] = t.parent();
  }

  SchedJob& Submit(const std::string& tenant, uint32_t cores, bool interactive = false,
                   int64_t limit_ms = 60 * kMin) {
    v1::Resources& r = resources_.emplace_back();
    r.set_cores(cores);
    r.set_ksps(10);
    r.set_streams(1);
    SchedJob& j = jobs_.emplace_back();
    j.id = jobs_.size();
    j.pool = "default";
    j.tenant = tenant;
    j.queue = "default";
    j.resources = &r;
    j.time_limit_ms = limit_ms;
    j.submit_ms = now_;
    j.interactive = interactive;
    pending_.push_back(&j);
    return j;
  }
  // One pass at `now`: starts and preemptions applied at once.
  SchedulePlan Pass(int64_t now) {
    now_ = now;
    SchedulerInput in;
    for (const SchedJob* p : pending_) in.pending.push_back(PendingJob::Of(*p));
    std::vector<RunningJob> running;
    for (const SchedJob* r : running_) running.push_back(RunningJob::Of(*r));
    in.running = running;
    in.now_ms = now;
    for (int b = 0; b < 8; ++b) {
      BoardCapacity board = Board("n", static_cast<uint32_t>(b), 16);
      auto grid = std::make_shared<CoreGrid>(*board.grid);
      for (const SchedJob* r : running_) {
        for (const TaskPlacement& t : r->tasks) {
          if (t.board != board.board) continue;
          grid->Occupy(t.rect);
          board.ksps_free -= r->resources->ksps();
          board.streams_free -= r->resources->streams();
        }
      }
      board.grid = grid;
      in.boards.push_back(std::move(board));
    }
    SchedulePlan plan = PlanPass(std::move(in), policy_);
    for (const auto& p : plan.preemptions) End(p.job_id);
    for (const auto& s : plan.starts) {
      for (size_t i = 0; i < pending_.size(); ++i) {
        if (pending_[i]->id != s.job_id) continue;
        SchedJob* j = const_cast<SchedJob*>(pending_[i]);
        j->start_ms = now;
        j->tasks = s.tasks;
        running_.push_back(j);
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    return plan;
  }
  void End(uint64_t id) {
    for (size_t i = 0; i < running_.size(); ++i) {
      if (running_[i]->id == id) running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  const std::vector<const SchedJob*>& running() const { return running_; }
  // Whether some subtree runs more than its nominals.
  bool Borrows() const {
    std::map<std::string, int64_t> over;
    for (const auto& t : config_.tenants()) {
      for (std::string n = t.name(); !n.empty(); n = parent_.at(n)) {
        over[n] -= static_cast<int64_t>(t.quotas(0).nominal());
      }
    }
    for (const SchedJob* r : running_) {
      for (std::string n = r->tenant; !n.empty(); n = parent_.at(n)) {
        over[n] += static_cast<int64_t>(r->cores());
      }
    }
    for (const auto& [n, o] : over) {
      if (o > 0) return true;
    }
    return false;
  }
  const std::vector<const SchedJob*>& pending() const { return pending_; }

  // Every limit of the tree, checked from the running jobs and the policy alone: a node with a
  // borrowing limit never runs more than its subtree's nominals plus that; a tree never more
  // than all its nominals; the others never take what a node does not lend. "" if all hold.
  std::string Violation() const {
    std::map<std::string, uint64_t> use, nominal;
    std::map<std::string, const v1::PoolCap*> cap;
    for (const auto& t : config_.tenants()) {
      cap[t.name()] = &t.quotas(0);
      for (std::string n = t.name(); !n.empty(); n = parent_.at(n)) {
        nominal[n] += t.quotas(0).nominal();
      }
    }
    uint64_t total_use = 0;
    for (const SchedJob* r : running_) {
      total_use += r->cores();
      for (std::string n = r->tenant; !n.empty(); n = parent_.at(n)) use[n] += r->cores();
    }
    uint64_t total_nominal = 0;
    for (const auto& t : config_.tenants()) {
      if (t.parent().empty()) total_nominal += nominal[t.name()];
    }
    for (const auto& t : config_.tenants()) {
      const std::string& n = t.name();
      const v1::PoolCap& c = *cap.at(n);
      if (t.parent().empty() && use[n] > nominal[n]) {
        return "tree " + n + " runs " + std::to_string(use[n]) + " of " +
               std::to_string(nominal[n]);
      }
      if (c.has_borrowing_limit() && use[n] > nominal[n] + c.borrowing_limit()) {
        return n + " runs " + std::to_string(use[n]) + " past its nominal " +
               std::to_string(nominal[n]) + " + borrowing " + std::to_string(c.borrowing_limit());
      }
      if (c.has_lending_limit() && nominal[n] > c.lending_limit() &&
          total_use - use[n] > total_nominal - (nominal[n] - c.lending_limit())) {
        return "others run " + std::to_string(total_use - use[n]) + " of what " + n +
               " does not lend";
      }
    }
    return "";
  }

 private:
  v1::SchedulingConfig config_;
  SchedulerPolicy policy_;
  std::map<std::string, std::string> parent_;
  std::deque<v1::Resources> resources_;
  std::deque<SchedJob> jobs_;
  std::vector<const SchedJob*> pending_, running_;
  int64_t now_ = 0;
};

std::string WaitWords(const SchedulePlan& plan, uint64_t id) {
  for (const auto& w : plan.waits) {
    if (w.job_id == id) return w.why();
  }
  return "(no wait)";
}

TEST(QuotaTreeSchedulerTest, ASubtreeUnderItsShareReclaimsWhatItLentInOnePassAfterTheGrace) {
  TreeCluster cluster(Institute());
  // gb takes all it may (40: its 32, ga's 8 lent); a sixth job waits.
  for (int i = 0; i < 6; ++i) cluster.Submit("pb1", 8);
  cluster.Pass(0);
  ASSERT_EQ(cluster.running().size(), 5u);
  EXPECT_EQ(cluster.Violation(), "");
  // A session never borrows: it says so.
  SchedJob& np = cluster.Submit("pb1", 8, /*interactive=*/true);
  SchedulePlan plan = cluster.Pass(kMin / 2);
  const WaitDecision* w = nullptr;
  for (const auto& x : plan.waits) w = x.job_id == np.id ? &x : w;
  ASSERT_NE(w, nullptr);
  EXPECT_NE(w->why().find("sessions and services run only within their account's share"),
            std::string::npos)
      << w->why();
  cluster.End(np.id);
  // pa1 runs 24: its 8 and ga's own 16 (which no project of ga has a claim on).
  for (int i = 0; i < 3; ++i) cluster.Submit("pa1", 8);
  cluster.Pass(kMin / 2);
  EXPECT_EQ(cluster.running().size(), 8u);
  // pa2 wants its 8: within its share, but ga's 8 lent are gb's now. Before the grace, it waits.
  SchedJob& back = cluster.Submit("pa2", 8);
  plan = cluster.Pass(kMin / 2 + 1);
  EXPECT_TRUE(plan.preemptions.empty());
  EXPECT_NE(WaitWords(plan, back.id).find("the account tree lets tenant pa2 take 0 more cores"),
            std::string::npos)
      << WaitWords(plan, back.id);
  // Once gb's jobs are past the grace (pa1's are not): one of gb's is preempted in this one
  // pass, and pa2's job starts in the next, before gb's sixth job (first in the queue) may
  // borrow again.
  plan = cluster.Pass(kMin);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].for_job, back.id);
  EXPECT_LE(plan.preemptions[0].job_id, 5u);  // one of gb's
  EXPECT_EQ(cluster.Violation(), "");
  plan = cluster.Pass(kMin + 1);
  ASSERT_EQ(plan.starts.size(), 1u);
  EXPECT_EQ(plan.starts[0].job_id, back.id);
  EXPECT_EQ(cluster.Violation(), "");
  EXPECT_NE(WaitWords(plan, 6).find("it would borrow from the account tree"), std::string::npos)
      << WaitWords(plan, 6);
}

TEST(QuotaTreeSchedulerTest, TenThousandRandomOperationsNeverBreakALimit) {
  for (uint32_t seed = 1; seed <= 2; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    // A random tree three deep: an institute, 2-3 groups, 1-3 projects each.
    v1::SchedulingConfig c = DefaultSchedulingConfig();
    std::vector<std::string> names{"inst"};
    AddTenant(c, "inst", "", pick(3) * 8);
    const int groups = 2 + pick(2);
    for (int g = 0; g < groups; ++g) {
      const std::string gn = "g" + std::to_string(g);
      AddTenant(c, gn, "inst", pick(4) * 8, pick(2) ? pick(3) * 8 : -1, pick(2) ? pick(3) * 4 : -1);
      names.push_back(gn);
      const int projects = 1 + pick(3);
      for (int p = 0; p < projects; ++p) {
        const std::string pn = gn + "p" + std::to_string(p);
        AddTenant(c, pn, gn, pick(3) * 8, pick(2) ? pick(3) * 4 : -1, pick(2) ? pick(3) * 4 : -1);
        names.push_back(pn);
      }
    }
    ASSERT_TRUE(ValidatePolicy(c).ok()) << ValidatePolicy(c).message();
    TreeCluster cluster(c);
    int64_t now = 0;
    size_t preemptions = 0, borrowed = 0;
    for (int op = 0; op < 5000; ++op) {
      const int what = pick(10);
      if (what < 5) {
        cluster.Submit(names[pick(static_cast<int>(names.size()))], 1 + pick(12), pick(8) == 0);
      } else if (what < 8 && !cluster.running().empty()) {
        cluster.End(cluster.running()[pick(static_cast<int>(cluster.running().size()))]->id);
      }
      now += pick(3) * kMin / 2;
      preemptions += cluster.Pass(now).preemptions.size();
      const std::string v = cluster.Violation();
      ASSERT_EQ(v, "") << "seed " << seed << ", operation " << op;
      borrowed += cluster.Borrows() ? 1 : 0;
    }
    // The test means something: subtrees borrowed, and shares were taken back.
    EXPECT_GT(preemptions, 10u) << "seed " << seed;
    EXPECT_GT(borrowed, 100u) << "seed " << seed;
  }
}

}  // namespace
}  // namespace snn
