// SIGHUP makes the master re-read its policy file: what changed is logged and applies at
// once; a file that does not parse changes nothing and says why.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <limits>
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

// The master checks what an admin sends as it checks the policy file: no infinite or NaN
// weight, no name that is not a name, no queue beyond the bound, whatever client sent it.
TEST(PolicyReloadTest, AdminValuesAreCheckedByTheMasterNotOnlyBySnnctl) {
  TestCluster cluster;
  cluster.StartMaster();
  auto client = cluster.Client();
  const std::string before = cluster.Snnctl({"policy", "show"}).out;
  auto refused = [&](v1::SetQueueRequest req, const std::string& expect) {
    auto answer = client->Call(rpc::kQueueSet, req);
    ASSERT_FALSE(answer.ok()) << req.ShortDebugString();
    EXPECT_NE(answer.status().message().find(expect), std::string::npos)
        << answer.status().message();
  };
  v1::SetQueueRequest infinite;
  infinite.set_create(true);
  infinite.mutable_queue()->set_name("fast");
  infinite.mutable_queue()->set_weight(std::numeric_limits<double>::infinity());
  refused(infinite, "queue 'fast': weight must be between 0 and 1e9");
  v1::SetQueueRequest nan = infinite;
  nan.mutable_queue()->set_weight(std::numeric_limits<double>::quiet_NaN());
  refused(nan, "weight must be between 0 and 1e9");
  v1::SetQueueRequest badname = infinite;
  badname.mutable_queue()->set_weight(1);
  badname.mutable_queue()->set_name("a queue; rm");
  refused(badname, "names use only letters, digits");
  EXPECT_EQ(cluster.Snnctl({"policy", "show"}).out, before) << "a refused change changed it";
  // Queues up to the bound, and not one more.
  v1::SetQueueRequest many = infinite;
  many.mutable_queue()->set_weight(1);
  for (int i = 1; i < 256; ++i) {  // "default" is the first
    many.mutable_queue()->set_name("q" + std::to_string(i));
    ASSERT_TRUE(client->Call(rpc::kQueueSet, many).ok()) << i;
  }
  many.mutable_queue()->set_name("one-too-many");
  refused(many, "the policy has 257 queues; at most 256");
}

}  // namespace
}  // namespace snn::testing
