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

#include "nodeagent/launcher.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/etcd_cluster.h"
#include "tests/test_util/netns.h"

namespace snn::testing {
namespace {

using Clock = std::chrono::steady_clock;

// The masters' flags: a short lease, so that a takeover comes about 2 s after a leader dies.
const std::vector<std::string> kHaFlags = {"--ha_lease_s=2"};

// Jobs that stay pending (they wait for job 1, which runs until cancelled).
v1::JobSpec StormJob(const std::string& name) {
  v1::JobSpec spec = ShellJob("true");
  spec.set_name(name);
  spec.add_after_ok(1);
  return spec;
}

// Submits jobs (named `prefix`N) back to back from its own thread until stopped, over a client
// `connect` makes (again after every failure); remembers each acknowledged job and when.
class SubmitStorm {
 public:
  using Connect = std::function<std::unique_ptr<RpcClient>()>;
  SubmitStorm(std::string prefix, Connect connect, std::function<void()> on_thread = {})
      : prefix_(std::move(prefix)), connect_(std::move(connect)), on_thread_(std::move(on_thread)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~SubmitStorm() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // name -> when it was acknowledged
  std::map<std::string, Clock::time_point> acked() {
    std::lock_guard lock(mu_);
    return acked_;
  }
  size_t count() {
    std::lock_guard lock(mu_);
    return acked_.size();
  }
  Clock::time_point last_ack() {
    std::lock_guard lock(mu_);
    return last_;
  }
  // The first acknowledgement after `t` (nullopt: none yet).
  std::optional<Clock::time_point> FirstAckAfter(Clock::time_point t) {
    std::lock_guard lock(mu_);
    std::optional<Clock::time_point> first;
    for (const auto& [name, at] : acked_) {
      if (at > t && (!first || at < *first)) first = at;
    }
    return first;
  }

 private:
  void Run() {
    if (on_thread_) on_thread_();
    std::unique_ptr<RpcClient> client;
    for (int n = 0; !stop_; ++n) {
      if (!client) client = connect_();
      if (!client) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      v1::SubmitRequest req;
      *req.mutable_spec() = StormJob(prefix_ + std::to_string(n));
      auto resp = client->Call<v1::SubmitResponse>("job.submit", req);
      if (!resp.ok()) {
        client.reset();  // an unknown outcome: not acknowledged, and never sent again
        continue;
      }
      std::lock_guard lock(mu_);
      last_ = Clock::now();
      acked_[req.spec().name()] = last_;
    }
  }

  const std::string prefix_;
  Connect connect_;
  std::function<void()> on_thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::map<std::string, Clock::time_point> acked_;  // guarded by mu_
  Clock::time_point last_;                          // guarded by mu_
  std::thread thread_;
};

// Every acknowledged job is in the master's list exactly once.
void ExpectEveryAckedJobOnce(TestCluster& cluster,
                             const std::map<std::string, Clock::time_point>& acked) {
  auto all = cluster.ListAll();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::map<std::string, int> seen;
  std::set<uint64_t> ids;
  for (const auto& job : all->jobs()) {
    ++seen[job.spec().name()];
    EXPECT_TRUE(ids.insert(job.id()).second) << "job id " << job.id() << " twice";
  }
  for (const auto& [name, at] : acked) {
    EXPECT_EQ(seen[name], 1) << name << " was acknowledged but is there " << seen[name] << " times";
  }
  for (const auto& [name, n] : seen) {
    if (name.rfind("storm", 0) == 0) EXPECT_LE(n, 1) << name;
  }
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

TEST(HaTest, ALeaderKilledDuringASubmitStormIsReplacedWithNothingLostOrRestarted) {
  if (!EtcdCluster::Available()) GTEST_SKIP() << "etcd is not installed (etcd-server)";
  TestCluster cluster;
  EtcdCluster etcd(cluster.dir());
  ASSERT_TRUE(etcd.Start().ok());
  cluster.StartHaMaster("m1", etcd.endpoints(), kHaFlags);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.HaLeader() == "m1"; }));
  cluster.StartHaMaster("m2", etcd.endpoints(), kHaFlags);
  cluster.StartAgent("node1", SmallBoards(1, 8));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  ASSERT_TRUE(cluster.Submit(ShellJob("sleep 600")).ok());
  const pid_t task = static_cast<pid_t>(cluster.WaitForRunningTask(1).pid());
  ASSERT_NE(task, 0) << "the long job never ran";

  SubmitStorm storm("storm-a", [&] { return cluster.Client(); });
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return storm.count() >= 50; }));
  const auto killed = Clock::now();
  cluster.KillHaMaster("m1");
  ASSERT_TRUE(
      TestCluster::WaitUntil([&] { return storm.FirstAckAfter(killed).has_value(); }, 30000))
      << "no standby took over";
  const double takeover = Seconds(*storm.FirstAckAfter(killed) - killed);
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
  cluster.StartHaMaster("m1", etcd.endpoints(), kHaFlags);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.HaLeader() == "m2"; }));
  SubmitStorm more("storm-b", [&] { return cluster.Client(); });
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return more.count() >= 20; }));
  more.Stop();
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
  const auto cut = Clock::now();

  // m2, asked directly, until it answers as the leader.
  auto m2 = std::make_unique<RpcClient>(std::chrono::milliseconds(2000));
  cluster.auth().SetUp(*m2);
  ASSERT_TRUE(m2->Connect(HostPort{"127.0.0.1", cluster.ha_master_port("m2")}).ok());
  v1::Credential cred;
  cred.set_tenant("alice");
  m2->set_credential(cred);
  Clock::time_point elected;
  ASSERT_TRUE(TestCluster::WaitUntil(
      [&] {
        if (!m2->Call<v1::PoolStatusResponse>("pool.status", v1::PoolStatusRequest()).ok()) {
          return false;
        }
        elected = Clock::now();
        return true;
      },
      30000))
      << "m2 never took over";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
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
