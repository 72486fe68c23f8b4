// A real network partition: node1's agent runs in its own network namespace, joined to the
// master's by a veth pair; taking the link down cuts it off without any FIN or RST. Skipped,
// saying why, where network namespaces cannot be created.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

#include "nodeagent/launcher.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

int Run(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()); }

// A namespace and a veth pair with addresses that exist only on this machine.
class Namespace {
 public:
  Namespace() {
    const int id = getpid() % 200 + 20;
    ns_ = "snn_part" + std::to_string(getpid());
    outer_ = "snnv" + std::to_string(getpid() % 100000) + "a";
    inner_ = "snnv" + std::to_string(getpid() % 100000) + "b";
    outer_ip_ = "10.231." + std::to_string(id) + ".1";
    inner_ip_ = "10.231." + std::to_string(id) + ".2";
    ok_ = Run("ip netns add " + ns_) == 0 &&
          Run("ip link add " + outer_ + " type veth peer name " + inner_) == 0 &&
          Run("ip link set " + inner_ + " netns " + ns_) == 0 &&
          Run("ip addr add " + outer_ip_ + "/30 dev " + outer_) == 0 &&
          Run("ip link set " + outer_ + " up") == 0 &&
          Run("ip netns exec " + ns_ + " ip addr add " + inner_ip_ + "/30 dev " + inner_) == 0 &&
          Run("ip netns exec " + ns_ + " ip link set " + inner_ + " up") == 0 &&
          Run("ip netns exec " + ns_ + " ip link set lo up") == 0;
  }
  ~Namespace() {
    Run("ip link del " + outer_);
    Run("ip netns del " + ns_);
  }
  bool ok() const { return ok_; }
  void Cut() { Run("ip link set " + outer_ + " down"); }
  void Heal() { Run("ip link set " + outer_ + " up"); }
  std::vector<std::string> Exec() const { return {"/usr/sbin/ip", "netns", "exec", ns_}; }
  const std::string& outer_ip() const { return outer_ip_; }

 private:
  std::string ns_, outer_, inner_, outer_ip_, inner_ip_;
  bool ok_ = false;
};

TEST(NetnsPartitionTest, CutLinkMeansDownRequeueAndFencingWithoutTwoCopies) {
  Namespace net;
  if (!net.ok()) GTEST_SKIP() << "cannot create network namespaces here (needs root and iproute2)";
  TestCluster cluster;
  cluster.set_master_host(net.outer_ip());
  cluster.StartMaster(
      {"--heartbeat_interval_ms=100", "--heartbeat_timeout_ms=2000", "--agent_lease_ms=800"});
  cluster.StartAgent("node1", SmallBoards(), {}, net.Exec());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600")).ok());
  const pid_t first = static_cast<pid_t>(cluster.WaitForRunningTask(1).pid());
  ASSERT_NE(first, 0) << "the job never ran";
  cluster.StartAgent("node2", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 2; }));

  net.Cut();
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return !GroupExists(first); }, 10000))
      << "the cut-off agent did not stop its task";
  const pid_t second = static_cast<pid_t>(cluster.WaitForRunningTask(1, 2, 10000).pid());
  ASSERT_NE(second, 0) << "the job never ran again elsewhere";
  EXPECT_EQ(cluster.Show(1)->tasks(0).node(), "node2");
  EXPECT_FALSE(GroupExists(first)) << "two copies of the task ran at once";

  net.Heal();
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 2; }, 20000))
      << "node1 did not come back after the link was restored";
  auto job = cluster.Show(1);
  EXPECT_EQ(job->attempt(), 2u);
  EXPECT_EQ(job->tasks(0).node(), "node2");
  EXPECT_TRUE(GroupExists(second));
}

}  // namespace
}  // namespace snn::testing
