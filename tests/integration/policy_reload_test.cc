// SIGHUP makes the master re-read its policy file: what changed is logged and applies at
// once; a file that does not parse changes nothing and says why.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <sstream>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

std::string ReadLog(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PolicyReloadTest, SighupReReadsThePolicyFileAndLogsWhatChanged) {
  TestCluster cluster;
  const std::string policy = cluster.dir() + "/policy.yaml";
  std::ofstream(policy) << "queues:\n  - {name: default, priority: 0}\n";
  cluster.StartMaster({"--policy_file=" + policy});
  cluster.StartAgent("node1", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  const std::string log = cluster.dir() + "/master.log";
  EXPECT_EQ(cluster.Snnctl({"policy", "show"}).out.find("urgent"), std::string::npos);

  std::ofstream(policy) << "queues:\n  - {name: default, priority: 0}\n"
                           "  - {name: urgent, priority: 10}\n"
                           "priority: {accrue_per_tenant: 2, starve_after: 14h, max_age: 2d}\n"
                           "billing: {currency: EUR, prices: {sim-v1: {core_hour: 1}}}\n";
  ASSERT_EQ(kill(cluster.master_pid(), SIGHUP), 0);
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    return ReadLog(log).find("policy reloaded from " + policy) != std::string::npos;
  })) << ReadLog(log);
  EXPECT_NE(ReadLog(log).find("queues: added urgent; priority; billing"), std::string::npos)
      << ReadLog(log);
  const std::string shown = cluster.Snnctl({"policy", "show"}).out;
  EXPECT_NE(shown.find("urgent"), std::string::npos);
  EXPECT_NE(shown.find("waiting time accrues for 2 jobs per tenant"), std::string::npos) << shown;
  // Durations as the file writes them, not in seconds.
  EXPECT_NE(shown.find("full age after 2d;"), std::string::npos) << shown;
  EXPECT_NE(shown.find("starvation guard 14h"), std::string::npos) << shown;
  v1::JobSpec urgent = ShellJob("true");
  urgent.set_queue("urgent");
  auto submitted = cluster.Submit(urgent);
  EXPECT_TRUE(submitted.ok()) << submitted.status().ToString();

  std::ofstream(policy) << "queues: [{name: default, priority: many}]\n";
  ASSERT_EQ(kill(cluster.master_pid(), SIGHUP), 0);
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    return ReadLog(log).find("the policy in force is kept") != std::string::npos;
  })) << ReadLog(log);
  EXPECT_NE(ReadLog(log).find("queues[0].priority"), std::string::npos) << ReadLog(log);
  EXPECT_NE(cluster.Snnctl({"policy", "show"}).out.find("urgent"), std::string::npos);

  // The reloaded policy is the stored one: a restart keeps it.
  cluster.StopMaster();
  std::ofstream(policy) << "queues:\n  - {name: default, priority: 0}\n";
  cluster.StartMaster({"--policy_file=" + policy});
  EXPECT_NE(cluster.Snnctl({"policy", "show"}).out.find("urgent"), std::string::npos);
}

}  // namespace
}  // namespace snn::testing
