// Controller high availability (--ha_etcd) on a real three-member etcd cluster: a leader killed
// during a submit storm is replaced by a standby that has every acknowledged job exactly once,
// keeps the running task, and takes the agent back; a leader cut off from etcd by a real
// partition (network namespaces) stops acknowledging before its successor is elected.
// Skipped, saying why, where etcd is not installed or namespaces cannot be made.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "common/base/clock.h"
#include "nodeagent/tasks/launcher.h"
#include "tests/integration/cluster.h"
#include "tests/integration/submit_storm.h"
#include "tests/test_util/etcd_cluster.h"
#include "tests/test_util/netns.h"

namespace snn::testing {
namespace {

// The masters' flags: a short lease, so that a takeover comes about 2 s after a leader dies.
const std::vector<std::string> kHaFlags = {"--ha_lease_s=2"};
// The storm runs with several groups in etcd at once: a kill leaves gaps for the successor to drop.
const std::vector<std::string> kStormFlags = {"--ha_lease_s=2", "--ha_max_in_flight=4"};

// The first batch number the log in etcd still holds (0: none, or unreadable).
uint64_t FirstLoggedBatch(const EtcdCluster& etcd) {
  auto keys = etcd.Keys("/snn-test/log/");
  if (keys.empty()) return 0;
  const std::string& key = keys.front();  // /snn-test/log/<16 hex digits>/...
  return std::stoull(key.substr(std::string("/snn-test/log/").size(), 16), nullptr, 16);
}

double Seconds(snn::MonotonicTime::duration d) { return std::chrono::duration<double>(d).count(); }

TEST(HaTest, ALeaderKilledDuringASubmitStormIsReplacedWithNothingLostOrRestarted) {
  if (!EtcdCluster::Available()) GTEST_SKIP() << "etcd is not installed (etcd-server)";
  TestCluster cluster;
  EtcdCluster etcd(cluster.dir());
  ASSERT_TRUE(etcd.Start().ok());
  cluster.StartHaMaster("m1", etcd.endpoints(), kStormFlags);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.HaLeader() == "m1"; }));
  cluster.StartHaMaster("m2", etcd.endpoints(), kStormFlags);
  // snnctl given only the standby is sent on to the leader.
  CliRun via_standby =
      cluster.RunSnnctl({"--master", cluster.ha_master_address("m2"), "--tenant", "alice", "jobs"});
  EXPECT_EQ(via_standby.exit_code, 0) << via_standby.err;
  cluster.StartAgent("node1", SmallBoards(1, 8));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600")).ok());
  const pid_t task = static_cast<pid_t>(cluster.WaitForRunningTask(1).pid());
  ASSERT_NE(task, 0) << "the long job never ran";

  SubmitStorm storm("storm-a", [&] { return cluster.Client(); });
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return storm.count() >= 50; }));
  const std::string old = cluster.ha_master_address("m1");
  const auto killed = snn::MonotonicNow();
  cluster.KillHaMaster("m1");
  ASSERT_TRUE(
      TestCluster::WaitUntil([&] { return storm.FirstAckAfter(killed, old).has_value(); }, 30000))
      << "no standby took over";
  const double takeover = Seconds(*storm.FirstAckAfter(killed, old) - killed);
  EXPECT_LT(takeover, 10.0);
  std::cout << "takeover: " << takeover << " s\n";
  const size_t before = storm.count();
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return storm.count() >= before + 50; }));
  storm.Stop();
  EXPECT_EQ(cluster.HaLeader(), "m2");
  ExpectEveryAckedJobOnce(cluster, storm.acked());

  // The running task went on untouched, and the agent came back to the new leader.
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  auto job = cluster.Show(1);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), v1::RUNNING);
  EXPECT_EQ(job->attempt(), 1u);
  EXPECT_EQ(static_cast<pid_t>(job->tasks(0).pid()), task);
  EXPECT_TRUE(GroupExists(task));

  // The old leader comes back as a standby, follows the log, and leads again with all of it.
  cluster.StartHaMaster("m1", etcd.endpoints(), kStormFlags);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.HaLeader() == "m2"; }));
  SubmitStorm more("storm-b", [&] { return cluster.Client(); });
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return more.count() >= 20; }));
  more.Stop();
  // Batches every master has applied leave etcd (they are compacted every 5 s): so m1 follows.
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return FirstLoggedBatch(etcd) > 1; }, 20000))
      << "the replicated log was never compacted";
  cluster.KillHaMaster("m2");
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.HaLeader() == "m1"; }, 30000));
  auto acked = storm.acked();
  acked.merge(more.acked());
  ExpectEveryAckedJobOnce(cluster, acked);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  job = cluster.Show(1);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->attempt(), 1u);
  EXPECT_TRUE(GroupExists(task));
}

TEST(HaTest, AStandbyBehindTheKeptLogCopiesTheLeadersStoreAndCanLead) {
  if (!EtcdCluster::Available()) GTEST_SKIP() << "etcd is not installed (etcd-server)";
  TestCluster cluster;
  EtcdCluster etcd(cluster.dir());
  ASSERT_TRUE(etcd.Start().ok());
  std::vector<std::string> flags = kHaFlags;
  flags.push_back("--ha_log_batches=100");
  cluster.StartHaMaster("m1", etcd.endpoints(), flags);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.HaLeader() == "m1"; }));
  cluster.StartHaMaster("m2", etcd.endpoints(), flags);
  cluster.StartAgent("node1", SmallBoards(1, 8));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600")).ok());
  const pid_t task = static_cast<pid_t>(cluster.WaitForRunningTask(1).pid());
  ASSERT_NE(task, 0);

  // m2 is away while the leader writes far more batches than the log keeps.
  cluster.KillHaMaster("m2");
  SubmitStorm storm("storm-a", [&] { return cluster.Client(); });
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return storm.count() >= 400; }, 60000));
  storm.Stop();
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return FirstLoggedBatch(etcd) > 150; }, 20000))
      << "the log was not cut to --ha_log_batches";

  cluster.StartHaMaster("m2", etcd.endpoints(), flags);
  SubmitStorm more("storm-b", [&] { return cluster.Client(); });
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return more.count() >= 30; }));
  more.Stop();
  // m2 copied the leader's store: it reports a position past the log's first batch.
  ASSERT_TRUE(TestCluster::WaitUntil(
      [&] {
        const std::string applied = etcd.Value("/snn-test/applied/m2");
        return !applied.empty() && std::stoull(applied) > FirstLoggedBatch(etcd);
      },
      30000))
      << "the standby never caught up";
  cluster.KillHaMaster("m1");
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.HaLeader() == "m2"; }, 30000))
      << "the standby did not take over";
  auto acked = storm.acked();
  acked.merge(more.acked());
  ExpectEveryAckedJobOnce(cluster, acked);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  auto job = cluster.Show(1);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), v1::RUNNING);
  EXPECT_EQ(job->attempt(), 1u);
  EXPECT_TRUE(GroupExists(task));
}

TEST(HaTest, MastersReachEtcdOverTlsWithTheirOwnCertificates) {
  if (!EtcdCluster::Available()) GTEST_SKIP() << "etcd is not installed (etcd-server)";
  TestCluster cluster;
  const std::string tls = cluster.auth().tls_dir();
  // etcd serves with the masters' certificate (it names 127.0.0.1) and asks clients for one.
  EtcdCluster etcd(cluster.dir(), 3, "",
                   {tls + "/ca.crt", tls + "/master.crt", tls + "/master.key"});
  ASSERT_TRUE(etcd.Start().ok());
  std::vector<std::string> flags = kHaFlags;
  for (const std::string& f :
       {"--ha_etcd_ca=" + tls + "/ca.crt", "--ha_etcd_cert=" + tls + "/master.crt",
        "--ha_etcd_key=" + tls + "/master.key"}) {
    flags.push_back(f);
  }
  ASSERT_EQ(etcd.endpoints().rfind("https://", 0), 0u);
  cluster.StartHaMaster("m1", etcd.endpoints(), flags);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.HaLeader() == "m1"; }));
  cluster.StartHaMaster("m2", etcd.endpoints(), flags);
  cluster.StartAgent("node1", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600")).ok());
  ASSERT_NE(cluster.WaitForRunningTask(1).pid(), 0u);
  EXPECT_FALSE(etcd.Keys("/snn-test/log/").empty()) << "nothing was written to etcd";
  cluster.KillHaMaster("m1");
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.HaLeader() == "m2"; }, 30000));
  auto job = cluster.Show(1);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->attempt(), 1u);
}

TEST(HaTest, ALeaderCutOffFromEtcdStopsAcknowledgingBeforeItsSuccessorIsElected) {
  if (!EtcdCluster::Available()) GTEST_SKIP() << "etcd is not installed (etcd-server)";
  Namespace net;
  if (!net.ok()) GTEST_SKIP() << "cannot create network namespaces here (needs root and iproute2)";
  TestCluster cluster;
  EtcdCluster etcd(cluster.dir(), 3, net.outer_ip());
  ASSERT_TRUE(etcd.Start().ok());
  // m1 in the namespace, reaching etcd over the link; m2 on this side.
  cluster.StartHaMaster("m1", etcd.extra_endpoints(), kHaFlags, net.Exec(), "0.0.0.0",
                        net.inner_ip());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.HaLeader() == "m1"; }));
  cluster.StartHaMaster("m2", etcd.endpoints(), kHaFlags);
  cluster.StartAgent("node1", SmallBoards());  // it reaches m1 over the link, then m2
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  auto first = cluster.Submit(ShellJob("true"));  // job 1, which the storm's jobs wait for
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  // The storm runs inside the namespace, against m1 alone: the cut leaves it m1's only client.
  const uint16_t m1_port = cluster.ha_master_port("m1");
  SubmitStorm storm(
      "storm-",
      [&]() -> std::unique_ptr<RpcClient> {
        auto client = std::make_unique<RpcClient>(std::chrono::milliseconds(2000));
        cluster.auth().SetUp(*client);
        if (!client->Connect(HostPort{"127.0.0.1", m1_port}).ok()) return nullptr;
        v1::Credential cred;
        cred.set_tenant("alice");
        client->set_credential(cred);
        return client;
      },
      [&] {
        const int fd = open(("/var/run/netns/" + net.name()).c_str(), O_RDONLY);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(setns(fd, CLONE_NEWNET), 0);  // this thread only
        close(fd);
      });
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return storm.count() >= 50; }));
  net.Cut();
  const auto cut = snn::MonotonicNow();

  // m2, asked directly, until it answers as the leader.
  auto m2 = std::make_unique<RpcClient>(std::chrono::milliseconds(2000));
  cluster.auth().SetUp(*m2);
  ASSERT_TRUE(m2->Connect(HostPort{"127.0.0.1", cluster.ha_master_port("m2")}).ok());
  v1::Credential cred;
  cred.set_tenant("alice");
  m2->set_credential(cred);
  snn::MonotonicTime elected;
  ASSERT_TRUE(TestCluster::WaitUntil(
      [&] {
        if (!m2->Call(rpc::kPoolStatus, v1::PoolStatusRequest()).ok() ||
            m2->target() != cluster.ha_master_address("m2")) {
          return false;
        }
        elected = snn::MonotonicNow();
        return true;
      },
      30000))
      << "m2 never took over";
  snn::SleepRealMs(500);
  storm.Stop();
  const auto last = storm.last_ack();
  std::cout << "last acknowledgement by the cut-off leader " << Seconds(last - cut)
            << " s after the cut; successor serving " << Seconds(elected - cut) << " s after\n";
  EXPECT_LT(last, elected) << "the old leader acknowledged after its successor was elected";
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return !cluster.HaMasterAlive("m1"); }, 10000))
      << "the cut-off leader still runs";
  ExpectEveryAckedJobOnce(cluster, storm.acked());
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }))
      << "the agent did not move to the new leader";
}

}  // namespace
}  // namespace snn::testing
