// The account tree with real daemons (issue 40): two labs under an institute share one board by
// their nominals; one lab borrows what the other lends, up to its borrowing limit, and says why
// it waits past it; the other takes its share back, preempting the borrower once the grace has
// passed; policy show and tenant set speak the tree, and a broken tree is refused in one line.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

bool Running(TestCluster& cluster, uint64_t id, const std::string& tenant, int timeout_ms = 20000) {
  return TestCluster::WaitUntil(
      [&] {
        auto j = cluster.Show(id, tenant);
        return j.ok() && j->state() == v1::RUNNING;
      },
      timeout_ms);
}

constexpr char kPolicy[] = R"(
scheduler: {preemption: true, preempt_grace: 1s}
tenants:
  - {name: inst}
  - {name: lab-a, parent: inst, quotas: {default: {nominal: 8}}}
  - {name: lab-b, parent: inst, quotas: {default: {nominal: 8, borrowing_limit: 8}}}
)";

TEST(AccountTreeTest, ALabBorrowsWhatTheOtherLendsAndGivesItBackWhenItIsWanted) {
  TestCluster cluster;
  std::ofstream(cluster.dir() + "/policy.yaml") << kPolicy;
  cluster.StartMaster({"--policy_file=" + cluster.dir() + "/policy.yaml"});
  cluster.StartAgent("node1", SmallBoards(1, 4, 1000, 4));  // one board of 16 cores
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  const CliRun shown = cluster.Snnctl({"policy", "show"});
  EXPECT_NE(shown.out.find("tenant lab-b (in inst): weight 1; pool default: limit none, "
                           "guaranteed 0, nominal 8, borrowing limit 8"),
            std::string::npos)
      << shown.out;

  // lab-b runs 16: its 8 and the 8 lab-a lends while idle; a third job is past its limit.
  v1::JobSpec half = ShellJob("sleep 600", 8, 600);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(cluster.Submit(half, "lab-b").ok());
  ASSERT_TRUE(Running(cluster, 1, "lab-b") && Running(cluster, 2, "lab-b"))
      << cluster.Show(2, "lab-b")->reason();
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600", 4, 600), "lab-b").ok());
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto j = cluster.Show(3, "lab-b");
    return j.ok() && j->reason().find(
                         "the account tree lets tenant lab-b take 0 more cores, "
                         "and this job needs 4") != std::string::npos;
  })) << cluster.Show(3, "lab-b")->reason();

  // lab-a wants its 8: one of lab-b's jobs is preempted (requeued), and lab-a's runs.
  ASSERT_TRUE(cluster.Submit(half, "lab-a").ok());
  ASSERT_TRUE(Running(cluster, 1, "lab-a", 60000)) << cluster.Show(1, "lab-a")->reason();
  uint32_t preempted = 0;
  for (uint64_t id : {1, 2}) preempted += cluster.Show(id, "lab-b")->preempt_count();
  EXPECT_EQ(preempted, 1u);
  EXPECT_EQ(cluster.Show(3, "lab-b")->state(), v1::PENDING);

  // Admins change the tree with tenant set; a parent that is no tenant is refused in one line.
  CliRun bad = cluster.Snnctl({"tenant", "set", "lab-b", "--parent", "nobody"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("tenant 'lab-b': its parent 'nobody' is not a tenant of the policy"),
            std::string::npos)
      << bad.err;
  CliRun set = cluster.Snnctl({"tenant", "set", "lab-b", "--pool", "default", "--lending-limit",
                               "2", "--borrowing-limit", "0"});
  EXPECT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(set.out,
            "tenant lab-b (in inst): weight 1; pool default: limit none, guaranteed 0, nominal "
            "8, borrowing limit 0, lending limit 2\n");
}

}  // namespace
}  // namespace snn::testing
