// Billing from durable usage records: a scripted month of jobs in the master's job machinery (a
// manual clock, a fake agent), its invoice against one computed by hand, the same invoice from
// the store alone after a restart, and a tenant over its budget whose new jobs wait.
#include "master/billing/billing.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "master/billing/billing_ledger.h"
#include "master/jobs/job_components.h"
#include "master/policy/policy_file.h"
#include "master/store/memory_store.h"
#include "tests/master/fake_agent_channel.h"

namespace snn {
namespace {

constexpr int64_t kHourMs = 3600 * 1000;
constexpr int64_t kDayMs = 24 * kHourMs;
constexpr int64_t kNov1 = 1'793'491'200'000;  // 2026-11-01T00:00:00Z
constexpr int64_t kDec1 = kNov1 + 30 * kDayMs;

v1::BillingConfig Prices() {
  // As an operator writes it in the policy file.
  auto policy = ParsePolicyYaml(R"(
billing:
  currency: EUR
  minimum: 1m
  prices:
    sim-v1: {core_hour: 0.10, ksps_hour: 0.002}
    big-v2: {core_hour: 0.50}
  discounts:
    - {over_core_hours: 100, percent: 10}
    - {over_core_hours: 10000, percent: 25}
  alert_at: [0.5, 1.0]
)");
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return policy->billing();
}

class BillingTest : public ::testing::Test {
 protected:
  BillingTest()
      : clock_(kNov1),
        journal_(store_, [](std::function<void()> fn) { fn(); }),
        components_(jobs_, archive_, nodes_, agents_, journal_, clock_, JobOptions(), [] {}) {
    AddNode("n1", 2, "sim-v1");
    AddNode("n2", 1, "big-v2");
    v1::SchedulingConfig config = components_.scheduling.scheduling();
    *config.mutable_billing() = Prices();
    components_.scheduling.SetScheduling(config);
    EXPECT_TRUE(ledger_.Load().ok());
    components_.set_billing(&ledger_);
  }

  void AddNode(const std::string& name, int boards, const std::string& type) {
    v1::NodeRecord node;
    node.set_name(name);
    node.add_pools("default");
    for (int i = 0; i < boards; ++i) {
      auto* b = node.add_boards();
      b->set_index(i);
      b->set_type(type);
      b->set_width(4);
      b->set_height(4);
      b->set_ksps(1000);
      b->set_streams(4);
      b->set_health(100);
    }
    auto session = Connection::Create(tcp::socket(io_), 1 << 20, nullptr, nullptr);
    sessions_.push_back(session);
    nodes_.Register(node, session, clock_.NowMs());
  }

  uint64_t Submit(const std::string& tenant, uint32_t cores, uint32_t ksps, uint32_t replicas = 1,
                  const std::string& type = "") {
    v1::JobSpec spec;
    spec.set_name("j");
    spec.set_tenant(tenant);
    spec.set_min_replicas(replicas);
    spec.set_time_limit_s(2 * 86400);
    spec.mutable_task()->set_command("/bin/true");
    auto* r = spec.mutable_task()->mutable_resources();
    r->set_cores(cores);
    r->set_ksps(ksps);
    r->set_streams(1);
    r->set_board_type(type);
    auto job = components_.lifecycle.Submit(spec, "alice");
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    journal_.Commit();
    return (*job)->id();
  }

  void Report(uint64_t id, v1::TaskState state) {
    v1::JobRecord* job = jobs_.Find(id);
    ASSERT_NE(job, nullptr);
    const uint32_t attempt = job->attempt();
    for (int i = 0; i < job->tasks_size(); ++i) {
      v1::TaskStatus s;
      s.set_job_id(id);
      s.set_index(static_cast<uint32_t>(i));
      s.set_attempt(attempt);
      s.set_state(state);
      const std::string node = job->tasks(i).node();
      components_.lifecycle.ApplyTaskStatus(node, s);
      job = jobs_.Find(id);
      if (job == nullptr) return;  // ended and archived
    }
    journal_.Commit();
  }

  // Submits, starts, runs for `ms` from now, and ends a job.
  void RunJob(const std::string& tenant, uint32_t cores, uint32_t ksps, int64_t ms,
              uint32_t replicas = 1, const std::string& type = "") {
    const uint64_t id = Submit(tenant, cores, ksps, replicas, type);
    components_.scheduling.RunSchedulingPass();
    ASSERT_EQ(jobs_.Find(id)->state(), v1::RUNNING) << jobs_.Find(id)->reason();
    Report(id, v1::TASK_RUNNING);
    clock_.AdvanceMs(ms);
    Report(id, v1::TASK_EXITED);
  }

  v1::Invoice InvoiceOf(BillingLedger& ledger, const std::string& tenant, int64_t from,
                        int64_t to) {
    auto records = ledger.Records(tenant, from, to);
    EXPECT_TRUE(records.ok()) << records.status().ToString();
    return ComputeInvoice(tenant, from, to, *records, ledger.config());
  }

  asio::io_context io_;
  ManualClock clock_;
  MemoryStore store_;
  Journal journal_;
  JobTable jobs_;
  JobArchive archive_{store_};
  NodeRegistry nodes_;
  testing::FakeAgentChannel agents_;
  JobComponents components_;
  BillingLedger ledger_{store_};
  std::vector<std::shared_ptr<Connection>> sessions_;
};

TEST_F(BillingTest, AMonthOfJobsGivesTheInvoiceComputedByHandAndTheSameAfterARestart) {
  // November, tenant lab:
  RunJob("lab", 4, 100, 10 * kHourMs);  // 40 core-hours, 1,000 KSPS-hours on sim-v1
  clock_.SetMs(kNov1 + 2 * kDayMs);
  RunJob("lab", 8, 200, 5 * kHourMs, 2);  // 2 replicas: 80 core-hours, 2,000 KSPS-hours
  clock_.SetMs(kNov1 + 9 * kDayMs);
  RunJob("lab", 1, 10, 20 * 1000);  // 20 s, billed the 1 min minimum: 1/60 core-hours
  clock_.SetMs(kNov1 + 14 * kDayMs);
  RunJob("lab", 4, 50, 2 * kHourMs, 1, "big-v2");  // 8 core-hours on big-v2, KSPS free there
  RunJob("other", 16, 1000, 3 * kHourMs);          // another tenant's: not on lab's bill
  // A job that never ran (its launch failed) costs nothing.
  const uint64_t failed = Submit("lab", 2, 10);
  components_.scheduling.RunSchedulingPass();
  Report(failed, v1::TASK_LAUNCH_FAILED);
  // Started on November 30 and ended on December 1: December's bill.
  clock_.SetMs(kDec1 - 2 * kHourMs);
  RunJob("lab", 2, 20, 4 * kHourMs);

  // By hand:
  //   sim-v1 core-hours  40 + 80 + 1/60 = 120.016667 x 0.10 = 12.0017 -> 12.00
  //   sim-v1 KSPS-hours  1000 + 2000 + 10/60 = 3000.166667 x 0.002 = 6.0003 -> 6.00
  //   big-v2 core-hours  8 x 0.50 = 4.00;  big-v2 KSPS-hours 100 x 0 = 0.00
  //   subtotal 22.00; 128.02 core-hours is past 100: 10% off, 2.20; total 19.80 EUR.
  const v1::Invoice invoice = InvoiceOf(ledger_, "lab", kNov1, kDec1);
  EXPECT_EQ(invoice.currency(), "EUR");
  EXPECT_EQ(invoice.task_attempts(), 5u);  // 1 + 2 replicas + 1 + 1
  ASSERT_EQ(invoice.lines_size(), 4);
  EXPECT_EQ(invoice.lines(0).board_type(), "big-v2");
  EXPECT_EQ(invoice.lines(0).resource(), "core-hours");
  EXPECT_DOUBLE_EQ(invoice.lines(0).quantity(), 8);
  EXPECT_EQ(invoice.lines(0).cents(), 400);
  EXPECT_EQ(invoice.lines(1).resource(), "ksps-hours");
  EXPECT_EQ(invoice.lines(1).cents(), 0);
  EXPECT_EQ(invoice.lines(2).board_type(), "sim-v1");
  EXPECT_NEAR(invoice.lines(2).quantity(), 120.016667, 1e-6);
  EXPECT_EQ(invoice.lines(2).cents(), 1200);
  EXPECT_NEAR(invoice.lines(3).quantity(), 3000.166667, 1e-6);
  EXPECT_EQ(invoice.lines(3).cents(), 600);
  EXPECT_EQ(invoice.subtotal_cents(), 2200);
  EXPECT_DOUBLE_EQ(invoice.discount_percent(), 10);
  EXPECT_EQ(invoice.discount_cents(), 220);
  EXPECT_EQ(invoice.total_cents(), 1980);
  EXPECT_EQ(FormatCents(invoice.total_cents()), "19.80");

  // December holds the job that crossed the month: 8 core-hours, 80 KSPS-hours = 0.96.
  const v1::Invoice december = InvoiceOf(ledger_, "lab", kDec1, kDec1 + 31 * kDayMs);
  EXPECT_EQ(december.task_attempts(), 1u);
  EXPECT_EQ(december.total_cents(), 80 + 16);

  // A restart: a new ledger reads only the store, and bills the same.
  BillingLedger restarted(store_);
  ASSERT_TRUE(restarted.Load().ok());
  restarted.SetConfig(Prices());
  const v1::Invoice again = InvoiceOf(restarted, "lab", kNov1, kDec1);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(invoice, again))
      << invoice.ShortDebugString() << "\n"
      << again.ShortDebugString();
}

TEST_F(BillingTest, ATenantOverItsBudgetHasNewJobsHeldWithTheReasonUntilCredited) {
  ASSERT_TRUE(ledger_.Credit("lab", 5'000'000, "grant", "admin", clock_.NowMs(), journal_).ok());
  components_.scheduling.BudgetsChanged();
  journal_.Commit();
  // A long job is running when the budget runs out: it finishes.
  const uint64_t running = Submit("lab", 1, 10);
  components_.scheduling.RunSchedulingPass();
  Report(running, v1::TASK_RUNNING);
  RunJob("lab", 4, 100, 10 * kHourMs);  // 4.00 + 2.00 = 6.00 of 5.00 credited
  ASSERT_EQ(ledger_.Account("lab")->charged_micros(), 6'000'000);
  EXPECT_EQ(jobs_.Find(running)->state(), v1::RUNNING);

  const uint64_t held = Submit("lab", 1, 10);
  const uint64_t others = Submit("other", 1, 10);  // no account: no budget
  components_.scheduling.RunSchedulingPass();
  EXPECT_EQ(jobs_.Find(others)->state(), v1::RUNNING);
  const v1::JobRecord* job = jobs_.Find(held);
  EXPECT_EQ(job->state(), v1::PENDING);
  EXPECT_NE(components_.scheduling.PendingReason(*job).find(
                "over its budget (charged 6.00 EUR of 5.00 EUR"),
            std::string::npos)
      << components_.scheduling.PendingReason(*job);
  EXPECT_EQ(jobs_.Find(running)->state(), v1::RUNNING);

  // The hold is durable: a restarted ledger holds the tenant too.
  BillingLedger restarted(store_);
  ASSERT_TRUE(restarted.Load().ok());
  EXPECT_EQ(restarted.HeldTenants().count("lab"), 1u);

  ASSERT_TRUE(ledger_.Credit("lab", 10'000'000, "top-up", "admin", clock_.NowMs(), journal_).ok());
  components_.scheduling.BudgetsChanged();
  journal_.Commit();
  components_.scheduling.RunSchedulingPass();
  EXPECT_EQ(jobs_.Find(held)->state(), v1::RUNNING);
  EXPECT_TRUE(ledger_.HeldTenants().empty());
}

TEST(BillingPolicyTest, NormalizedUnitsAreChargedPerUnitHour) {
  // A price per unit-hour from the policy file; a job that asked for 1.5 units for 2 hours is
  // charged 3 unit-hours, beside its cores and its KSPS (1,500, the units in measured KSPS).
  auto policy = ParsePolicyYaml(
      "billing: {currency: EUR, prices: {quick: {core_hour: 0.1, ksps_hour: 0.001, "
      "unit_hour: 0.5}}}");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  v1::UsageRecord r;
  r.set_tenant("lab");
  r.set_board_type("quick");
  r.set_cores(2);
  r.set_ksps(1500);
  r.set_units(1.5);
  r.set_start_ms(0);
  r.set_end_ms(2 * 3600 * 1000);
  const v1::Invoice invoice = ComputeInvoice("lab", 0, 86400 * 1000, {r}, policy->billing());
  ASSERT_EQ(invoice.lines_size(), 3);
  EXPECT_EQ(invoice.lines(2).resource(), "unit-hours");
  EXPECT_DOUBLE_EQ(invoice.lines(2).quantity(), 3);
  EXPECT_EQ(invoice.lines(2).cents(), 150);
  EXPECT_EQ(invoice.subtotal_cents(), 40 + 300 + 150);  // 4 core-h, 3,000 KSPS-h, 3 unit-h
  EXPECT_EQ(ChargeMicros(r, policy->billing()), 4'900'000);
}

TEST(BillingPolicyTest, BadBillingSectionsAreRefusedWithWhere) {
  auto negative = ParsePolicyYaml("billing: {prices: {sim-v1: {core_hour: -1}}}");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("billing.prices.sim-v1.core_hour"), std::string::npos)
      << negative.status().message();
  auto percent = ParsePolicyYaml("billing: {discounts: [{over_core_hours: 1, percent: 120}]}");
  ASSERT_FALSE(percent.ok());
  EXPECT_NE(percent.status().message().find("percent"), std::string::npos);
  auto unknown = ParsePolicyYaml("billing: {price: {}}");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("price"), std::string::npos);
}

}  // namespace
}  // namespace snn
