// Multifactor priority, the fair-share ledger, the starvation guard, and the policy file.
#include "master/sched/priority.h"

#include <gtest/gtest.h>

#include "master/policy/policy_file.h"
#include "master/sched/policy_config.h"
#include "snn_paths.h"

namespace snn {
namespace {

constexpr int64_t kHour = 3600'000;

TEST(PriorityTest, EachFactorFromZeroToOneAndTheWeightedTotal) {
  PriorityWeights w;
  w.age = 100;
  w.fairshare = 10;
  w.size = 1;
  w.queue = 1000;
  w.job = 10000;
  w.max_age_ms = 10 * kHour;
  PriorityInputs in;
  in.wait_ms = 5 * kHour;
  in.cores = 16;
  in.pool_cores = 64;
  in.tenant_usage_share = 0.5;
  in.tenant_weight_share = 0.5;  // used exactly its share
  in.queue_priority = 5;
  in.max_queue_priority = 10;
  in.job_priority = 0;
  const PriorityFactors f = ComputePriority(in, w);
  EXPECT_DOUBLE_EQ(f.age, 0.5);
  EXPECT_DOUBLE_EQ(f.fairshare, 0.5);
  EXPECT_DOUBLE_EQ(f.size, 0.25);
  EXPECT_DOUBLE_EQ(f.queue, 0.5);
  EXPECT_DOUBLE_EQ(f.job, 0.5);
  EXPECT_DOUBLE_EQ(f.total, 50 + 5 + 0.25 + 500 + 5000);
  in.wait_ms = 100 * kHour;   // capped
  in.tenant_usage_share = 0;  // used nothing: full fair share
  w.favor_small = true;
  const PriorityFactors g = ComputePriority(in, w);
  EXPECT_DOUBLE_EQ(g.age, 1);
  EXPECT_DOUBLE_EQ(g.fairshare, 1);
  EXPECT_DOUBLE_EQ(g.size, 0.75);
}

TEST(PriorityTest, TheSlowdownFactorIsTheSlowdownAJobWouldSeeIfItStartedNow) {
  PriorityWeights w;
  w.age = w.fairshare = w.queue = w.job = 0;
  w.slowdown = 1000;
  PriorityInputs in;
  in.time_limit_ms = kHour;
  in.wait_ms = 0;
  EXPECT_DOUBLE_EQ(ComputePriority(in, w).slowdown, 0);  // just arrived
  in.wait_ms = kHour;                                    // waited its own limit: slowdown 2
  EXPECT_DOUBLE_EQ(ComputePriority(in, w).slowdown, 0.5);
  EXPECT_DOUBLE_EQ(ComputePriority(in, w).total, 500);
  in.wait_ms = 3 * kHour;  // slowdown 4
  EXPECT_DOUBLE_EQ(ComputePriority(in, w).slowdown, 0.75);
  // A one-minute job that waited 10 minutes (slowdown 11) goes before a day-long job that
  // waited an hour (slowdown 1.04): the same wait costs a short job more.
  PriorityInputs shortjob = in, longjob = in;
  shortjob.time_limit_ms = 60'000;
  shortjob.wait_ms = 600'000;
  longjob.time_limit_ms = 24 * kHour;
  longjob.wait_ms = kHour;
  EXPECT_GT(ComputePriority(shortjob, w).total, ComputePriority(longjob, w).total);
  // Bounded as slowdown is measured: limits under 10 s count as 10 s.
  shortjob.time_limit_ms = 1;
  shortjob.wait_ms = 10'000;
  EXPECT_DOUBLE_EQ(ComputePriority(shortjob, w).slowdown, 0.5);
  // No time limit, no estimate: no slowdown factor.
  shortjob.time_limit_ms = 0;
  EXPECT_DOUBLE_EQ(ComputePriority(shortjob, w).slowdown, 0);
}

TEST(PriorityTest, UsageDecaysWithTheHalfLife) {
  FairShareLedger ledger(10 * kHour);
  ledger.AdvanceTo(0);
  ledger.Charge("alice", 1000);
  ledger.Charge("bob", 250);
  ledger.AdvanceTo(10 * kHour);
  EXPECT_NEAR(ledger.usage("alice"), 500, 1e-9);
  ledger.AdvanceTo(20 * kHour);
  EXPECT_NEAR(ledger.usage("alice"), 250, 1e-9);
  EXPECT_NEAR(ledger.total(), 312.5, 1e-9);
  ledger.AdvanceTo(5 * kHour);  // time never runs backwards here
  EXPECT_NEAR(ledger.usage("alice"), 250, 1e-9);
}

TEST(PriorityTest, ChargesAfterAVeryLongDecayKeepTheirPrecision) {
  // A year of one-hour half-lives: the shared scale falls far below 1e-100 and is folded in.
  FairShareLedger ledger(kHour);
  ledger.AdvanceTo(0);
  FairShareLedger::Account alice = ledger.AccountOf("alice");
  ledger.Charge(alice, 1e12);
  for (int64_t h = 1; h <= 24 * 365; ++h) ledger.AdvanceTo(h * kHour);
  EXPECT_LT(ledger.usage("alice"), 1e-100);
  ledger.Charge(alice, 3);
  ledger.Charge("bob", 1);
  EXPECT_NEAR(ledger.usage("alice"), 3, 1e-12);
  EXPECT_NEAR(ledger.total(), 4, 1e-12);
  EXPECT_NEAR(ledger.all().at("bob"), 1, 1e-12);
  ledger.AdvanceTo(24 * 365 * kHour + kHour);
  EXPECT_NEAR(ledger.total(), 2, 1e-12);
}

TEST(PriorityTest, AStarvingJobGoesFirstWhateverItsPriority) {
  PriorityWeights w;
  w.starve_after_ms = 4 * kHour;
  // Not starving: by priority, then id.
  EXPECT_TRUE(GoesFirst(kHour, 900, 2, 2 * kHour, 100, 1, w));
  EXPECT_TRUE(GoesFirst(kHour, 100, 1, kHour, 100, 2, w));
  // Starving beats any priority; among starving, the oldest first.
  EXPECT_TRUE(GoesFirst(5 * kHour, 0, 9, kHour, 1e9, 1, w));
  EXPECT_TRUE(GoesFirst(6 * kHour, 0, 9, 5 * kHour, 1e9, 1, w));
  w.starve_after_ms = 0;  // off
  EXPECT_FALSE(GoesFirst(5 * kHour, 0, 9, kHour, 1e9, 1, w));
}

TEST(PolicyConfigTest, TheFileGivesQueuesTenantsQuotasAndWeights) {
  auto c = ParsePolicyYaml(R"(
scheduler: {backfill: easy, backfill_order: queue, backfill_age_first_after: 3h,
            preemption: true, preempt_grace: 2m}
priority:
  weights: {age: 10, fairshare: 20, size: 0, queue: 30, job: 40, slowdown: 50}
  max_age: 1d
  fairshare_half_life: 3d
  starve_after: 6h
  accrue_per_tenant: 3
queues:
  - {name: default}
  - name: urgent
    priority: 10
    weight: 2
    pools: {default: {max: 64, guaranteed: 16}}
tenants:
  - name: alice
    weight: 3
    quotas: {default: {limit: 32, guaranteed: 8}}
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->preempt_grace_s(), 120u);
  EXPECT_EQ(c->priority().starve_after_s(), 6u * 3600);
  EXPECT_EQ(c->priority().accrue_per_tenant(), 3u);
  const SchedulerPolicy p = ToSchedulerPolicy(*c);
  EXPECT_FALSE(p.backfill_shortest_first);
  EXPECT_EQ(p.preempt_grace_ms, 120'000);
  EXPECT_EQ(p.backfill_age_first_after_ms, 3 * 3600'000);
  EXPECT_EQ((p.tenant_quotas.at({"alice", "default"}).limit), 32u);
  EXPECT_EQ((p.queue_quotas.at({"urgent", "default"}).guaranteed), 16u);
  EXPECT_EQ(ToWeights(*c).fairshare, 20);
  EXPECT_EQ(ToWeights(*c).slowdown, 50);
  EXPECT_EQ(FindQueue(*c, "urgent")->priority(), 10);
}

TEST(PolicyConfigTest, TheShippedPolicyFileIsValid) {
  auto c = LoadPolicyFile(std::string(SNN_SOURCE_DIR) + "/etc/policy.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NE(FindQueue(*c, "urgent"), nullptr);
  EXPECT_EQ(FindTenant(*c, "lab-a")->quotas(0).guaranteed(), 64u);
  // The file says what the master would do without it: the simulator replays these defaults.
  const v1::SchedulingConfig d = DefaultSchedulingConfig();
  EXPECT_EQ(c->backfill_order(), d.backfill_order());
  EXPECT_EQ(c->backfill_age_first_after_s(), d.backfill_age_first_after_s());
  EXPECT_EQ(c->priority().starve_after_s(), d.priority().starve_after_s());
  EXPECT_EQ(c->priority().max_age_s(), d.priority().max_age_s());
  EXPECT_EQ(c->priority().fairshare_half_life_s(), d.priority().fairshare_half_life_s());
  EXPECT_EQ(c->priority().slowdown_weight(), d.priority().slowdown_weight());
  EXPECT_EQ(c->priority().accrue_per_tenant(), d.priority().accrue_per_tenant());
  EXPECT_GT(d.priority().slowdown_weight(), 0);
}

TEST(PolicyConfigTest, ChangesThatMakeNoSenseAreRefusedWithTheReason) {
  auto bad = [](const std::string& yaml) {
    auto c = ParsePolicyYaml(yaml);
    return c.ok() ? std::string("accepted") : c.status().message();
  };
  EXPECT_NE(bad("tenants: [{name: a, quotas: {default: {limit: 4, guaranteed: 8}}}]")
                .find("guaranteed 8 is above the limit 4"),
            std::string::npos);
  EXPECT_NE(bad("tenants: [{name: a, quotas: {default: {limit: -4}}}]").find("limit"),
            std::string::npos);
  EXPECT_NE(bad("queues: [{name: a}, {name: a}]").find("appears twice"), std::string::npos);
  EXPECT_NE(bad("scheduler: {backfill: sometimes}").find("use easy or fcfs"), std::string::npos);
  EXPECT_NE(bad("queues: [{name: a, colour: red}]").find("colour"), std::string::npos);
  EXPECT_NE(bad("priority: {weights: {age: -1}}").find("between 0 and 1e9"), std::string::npos);
  EXPECT_NE(bad("priority: {accrue_per_tenant: -2}").find("priority.accrue_per_tenant"),
            std::string::npos);
  EXPECT_NE(bad("priority: {accrue_per_tenant: two}").find("priority.accrue_per_tenant"),
            std::string::npos);
  EXPECT_NE(bad("limits: {per_user: {max_submitted: 0}}")
                .find("limits.per_user.max_submitted must be a number of jobs from 1"),
            std::string::npos);
  EXPECT_NE(
      bad("limits: {per_user: {max_time_limit: soon}}").find("limits.per_user.max_time_limit"),
      std::string::npos);
  EXPECT_NE(bad("limits: {per_group: {max_submitted: 3}}").find("per_group"), std::string::npos);
  EXPECT_NE(bad("tenants: [{name: a, limits: {max_jobs: 3}}]").find("max_jobs"), std::string::npos);
  auto limited = ParsePolicyYaml(
      "limits: {per_user: {max_submitted: 5, max_time_limit: 1d}}\n"
      "tenants: [{name: a, limits: {max_time_limit: 90m}}]");
  ASSERT_TRUE(limited.ok()) << limited.status().ToString();
  EXPECT_EQ(limited->user_limits().max_submitted(), 5u);
  EXPECT_EQ(limited->user_limits().max_time_limit_s(), 86400u);
  EXPECT_EQ(limited->tenants(0).limits().max_time_limit_s(), 5400u);

  const v1::SchedulingConfig base = DefaultSchedulingConfig();
  const std::set<std::string> pools = {"default"};
  v1::TenantConfig t;
  t.set_name("nobody");
  t.set_weight(1);
  auto unknown = SetTenant(base, t, /*create=*/false, pools);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown tenant 'nobody'"), std::string::npos);
  auto* cap = t.add_quotas();
  cap->set_pool("gpu");
  cap->set_limit(4);
  auto no_pool = SetTenant(base, t, /*create=*/true, pools);
  ASSERT_FALSE(no_pool.ok());
  EXPECT_NE(no_pool.status().message().find("unknown pool 'gpu'"), std::string::npos);
  cap->set_pool("default");
  cap->set_guaranteed(5);
  auto above = SetTenant(base, t, true, pools);
  ASSERT_FALSE(above.ok());
  EXPECT_NE(above.status().message().find("above the limit"), std::string::npos);
  cap->set_guaranteed(2);
  auto ok = SetTenant(base, t, true, pools);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(FindTenant(*ok, "nobody")->quotas(0).limit(), 4u);
  // A later change to another pool field keeps what it does not name.
  v1::TenantConfig weight_only;
  weight_only.set_name("nobody");
  weight_only.set_weight(5);
  auto merged = SetTenant(*ok, weight_only, false, pools);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(FindTenant(*merged, "nobody")->weight(), 5);
  EXPECT_EQ(FindTenant(*merged, "nobody")->quotas(0).limit(), 4u);
  // As PUT /v1/tenants with the name and a quota only: the weight and the parent stay.
  v1::TenantConfig parent;
  parent.set_name("institute");
  auto tree = SetTenant(*merged, parent, true, pools);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  EXPECT_EQ(FindTenant(*tree, "institute")->weight(), 1) << "a new tenant's default";
  v1::TenantConfig join;
  join.set_name("nobody");
  join.set_parent("institute");
  tree = SetTenant(*tree, join, false, pools);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  v1::TenantConfig quota_only;
  quota_only.set_name("nobody");
  auto* limit = quota_only.add_quotas();
  limit->set_pool("default");
  limit->set_limit(6);
  auto kept = SetTenant(*tree, quota_only, false, pools);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(FindTenant(*kept, "nobody")->weight(), 5);
  EXPECT_EQ(FindTenant(*kept, "nobody")->parent(), "institute");
  EXPECT_EQ(FindTenant(*kept, "nobody")->quotas(0).limit(), 6u);
  v1::TenantConfig leave;
  leave.set_name("nobody");
  leave.set_parent("");
  auto left = SetTenant(*kept, leave, false, pools);
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  EXPECT_EQ(FindTenant(*left, "nobody")->parent(), "");
  EXPECT_EQ(FindTenant(*left, "nobody")->weight(), 5);
  // A queue alike: a change of its pools keeps its tier and weight.
  v1::QueueConfig tier;
  tier.set_name("urgent");
  tier.set_priority(10);
  tier.set_weight(3);
  auto queues = SetQueue(base, tier, true, pools);
  ASSERT_TRUE(queues.ok()) << queues.status().ToString();
  v1::QueueConfig pools_only;
  pools_only.set_name("urgent");
  pools_only.add_pools()->set_pool("default");
  pools_only.mutable_pools(0)->set_limit(8);
  queues = SetQueue(*queues, pools_only, false, pools);
  ASSERT_TRUE(queues.ok()) << queues.status().ToString();
  for (const auto& q : queues->queues()) {
    if (q.name() != "urgent") continue;
    EXPECT_EQ(q.priority(), 10);
    EXPECT_EQ(q.weight(), 3);
  }
}

}  // namespace
}  // namespace snn
