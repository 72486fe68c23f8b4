// Billing with real daemons: prices in the policy file, an admin's credit, a job that runs and
// is charged, the tenant over its budget with its next job held (the reason in snnctl show),
// the same invoice from snnctl before and after a master restart, and the job released by a
// new credit.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

TEST(BillingIntegrationTest, ChargesHoldsInvoicesAndReleasesAcrossARestart) {
  TestCluster cluster;
  const std::string policy = cluster.dir() + "/policy.yaml";
  // One core for the one-minute minimum costs 60.00; KSPS are free.
  std::ofstream(policy) << "billing: {currency: EUR, minimum: 1m, prices: {sim-v1: {core_hour: "
                           "3600}}}\n";
  cluster.StartMaster({"--policy_file=" + policy});
  cluster.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));

  CliRun credit = cluster.Snnctl({"tenant", "credit", "alice", "50", "--note", "grant"});
  ASSERT_EQ(credit.exit_code, 0) << credit.err;
  EXPECT_NE(credit.out.find("Tenant alice: credited 50.00, charged 0.00, balance 50.00"),
            std::string::npos)
      << credit.out;
  EXPECT_NE(cluster.Snnctl({"tenant", "credit", "alice", "ten"}).err.find("not a number"),
            std::string::npos);

  auto first = cluster.Submit(ShellJob("true"));
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(cluster.WaitForState(first->tenant_job_id(), v1::COMPLETED));
  // The charge is written with the task's end: 60.00 of 50.00, so the next job is held.
  auto second = cluster.Submit(ShellJob("true"));
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster.Show(second->tenant_job_id());
    return job.ok() && job->reason().find("over its budget") != std::string::npos;
  })) << cluster.Snnctl({"show", std::to_string(second->tenant_job_id())}).out;
  EXPECT_NE(cluster.Snnctl({"show", std::to_string(second->tenant_job_id())})
                .out.find("held: tenant alice is over its budget (charged 60.00 EUR of 50.00 EUR"),
            std::string::npos);

  const std::vector<std::string> invoice_args = {"invoice", "--from", "2000-01-01", "--to",
                                                 "2100-01-01"};
  CliRun before = cluster.Snnctl(invoice_args);
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_NE(before.out.find("Total 60.00 EUR"), std::string::npos) << before.out;
  EXPECT_NE(before.out.find("balance -10.00 EUR (over budget"), std::string::npos) << before.out;

  cluster.StopMaster();
  cluster.StartMaster({"--policy_file=" + policy});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  CliRun after = cluster.Snnctl(invoice_args);
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
  EXPECT_EQ(cluster.Show(second->tenant_job_id())->state(), v1::PENDING);

  ASSERT_EQ(cluster.Snnctl({"tenant", "credit", "alice", "100"}).exit_code, 0);
  EXPECT_TRUE(cluster.WaitForState(second->tenant_job_id(), v1::COMPLETED));
}

TEST(BillingIntegrationTest, UsageAndReportShowWhatRanAndWhatRuns) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  auto done = cluster.Submit(ShellJob("exit 3", 2));
  ASSERT_TRUE(done.ok());
  ASSERT_TRUE(cluster.WaitForState(done->tenant_job_id(), v1::FAILED));
  auto running = cluster.Submit(ShellJob("sleep 600", 1));
  ASSERT_TRUE(running.ok());
  ASSERT_NE(cluster.WaitForRunningTask(running->tenant_job_id()).pid(), 0u);

  CliRun csv = cluster.Snnctl({"usage", "--csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::vector<std::string> lines;
  for (size_t at = 0; at < csv.out.size();) {
    const size_t nl = csv.out.find('\n', at);
    lines.push_back(csv.out.substr(at, nl - at));
    at = nl + 1;
  }
  ASSERT_EQ(lines.size(), 3u) << csv.out;
  EXPECT_EQ(lines[0].rfind("JOBID,TASK,TRY,TENANT,USER,POOL,BOARD,START,END,ELAPSED,CORES,", 0),
            0u);
  EXPECT_EQ(lines[1].rfind("1,0,1,alice,", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find(",sim-v1,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(",2,"), std::string::npos) << lines[1];  // cores
  EXPECT_EQ(lines[1].substr(lines[1].size() - 19), ",3,EXITED,batch,-,-") << lines[1];
  EXPECT_EQ(lines[2].rfind("2,0,1,alice,", 0), 0u) << lines[2];
  EXPECT_EQ(lines[2].substr(lines[2].size() - 20), ",-,RUNNING,batch,-,-") << lines[2];

  CliRun exited = cluster.Snnctl({"usage", "--state", "exited", "-o", "json"});
  ASSERT_EQ(exited.exit_code, 0) << exited.err;
  EXPECT_NE(exited.out.find("\"exit_code\": 3"), std::string::npos) << exited.out;
  EXPECT_EQ(exited.out.find("RUNNING"), std::string::npos) << exited.out;
  EXPECT_NE(cluster.Snnctl({"usage", "--since", "x"}).err.find("snnctl: "), std::string::npos);

  CliRun report = cluster.Snnctl({"report", "--from", "1d", "--to", "now", "--by-user"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("TENANT  USER"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("alice   "), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("default"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("16     "), std::string::npos) << report.out;  // the pool's cores
  CliRun empty = cluster.Snnctl({"report", "--from", "now", "--to", "1d"});
  EXPECT_EQ(empty.exit_code, 1) << empty.out;
  EXPECT_NE(empty.err.find("the period is empty"), std::string::npos) << empty.err;
}

}  // namespace
}  // namespace snn::testing
