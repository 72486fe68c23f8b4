// The policy's limits on what a user and a tenant may have at once, with real daemons: a job
// past a user's or a tenant's max_submitted, or asking more than max_time_limit, is refused with
// one line naming the limit and changes nothing; a job that ends makes room; the counts survive
// a master restart; past max_running a job waits, its reason naming the limit, and starts when
// a running one ends; policy show says the limits.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

constexpr char kPolicy[] = R"(limits:
  per_user: {max_submitted: 3, max_running: 2, max_time_limit: 2h}
tenants:
  - name: lab
    limits: {max_submitted: 2}
  - name: batch
    limits: {max_running: 1}
)";

class UsageLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(cluster_.dir() + "/policy.yaml") << kPolicy;
    StartMaster();
    cluster_.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }
  void StartMaster() { cluster_.StartMaster({"--policy_file=" + cluster_.dir() + "/policy.yaml"}); }
  std::string JobFile(const std::string& name, const std::string& time_limit) {
    const std::string path = cluster_.dir() + "/" + name + ".yaml";
    std::ofstream(path) << "name: " << name << "\ntime_limit: " << time_limit
                        << "\ntask:\n  command: /bin/sleep\n  args: [\"600\"]\n"
                           "  resources: {cores: 1, ksps: 10, streams: 1}\n";
    return path;
  }
  CliRun Submit(const std::string& tenant, const std::string& time_limit = "1h") {
    return cluster_.Snnctl({"submit", JobFile("j", time_limit)}, tenant);
  }
  size_t Jobs() {
    auto all = cluster_.ListAll();
    return all.ok() ? static_cast<size_t>(all->jobs_size()) : 0;
  }

  TestCluster cluster_;
};

TEST_F(UsageLimitsTest, SubmitsPastALimitAreRefusedNamingItAndChangeNothing) {
  ASSERT_EQ(Submit("lab").exit_code, 0);
  ASSERT_EQ(Submit("lab").exit_code, 0);
  CliRun third = Submit("lab");
  EXPECT_NE(third.exit_code, 0);
  EXPECT_NE(third.err.find("tenant lab has 2 jobs pending or running, the most 2 allowed "
                           "(policy tenant lab limits.max_submitted)"),
            std::string::npos)
      << third.err;

  ASSERT_EQ(Submit("alice").exit_code, 0);  // the user's third job, in another tenant
  const std::string user = cluster_.Show(1, "lab")->spec().user();
  CliRun fourth = Submit("alice");
  EXPECT_NE(fourth.exit_code, 0);
  EXPECT_NE(fourth.err.find("user " + user +
                            " has 3 jobs pending or running, the most 3 allowed (policy "
                            "limits.per_user.max_submitted)"),
            std::string::npos)
      << fourth.err;
  CliRun too_long = Submit("alice", "3h");
  EXPECT_NE(too_long.exit_code, 0);
  EXPECT_NE(too_long.err.find("time_limit 3h is longer than user " + user +
                              " may ask for, 2h (policy limits.per_user.max_time_limit)"),
            std::string::npos)
      << too_long.err;
  EXPECT_EQ(Jobs(), 3u) << "a refused submit made a job";

  // The counts are rebuilt from the store: a restarted master refuses the same job.
  cluster_.StopMaster();
  StartMaster();
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  EXPECT_NE(Submit("alice").exit_code, 0);

  // A job that ends makes room.
  ASSERT_EQ(cluster_.Snnctl({"cancel", "1"}, "alice").exit_code, 0);
  CliRun again = Submit("alice");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Jobs(), 4u);

  CliRun shown = cluster_.Snnctl({"policy", "show"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("limits: each user at most 3 jobs pending or running, at most 2 "
                           "running, time limits up to 2h"),
            std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("; its jobs at most 2 jobs pending or running"), std::string::npos)
      << shown.out;
}

TEST_F(UsageLimitsTest, PastMaxRunningAJobWaitsSayingWhyAndStartsWhenOneEnds) {
  auto reason_of = [&](uint64_t id, const std::string& tenant) {
    auto job = cluster_.Show(id, tenant);
    return job.ok() ? job->reason() : std::string();
  };
  auto running = [&](uint64_t id, const std::string& tenant) {
    return TestCluster::WaitUntil([&] {
      auto job = cluster_.Show(id, tenant);
      return job.ok() && job->state() == v1::RUNNING;
    });
  };
  ASSERT_EQ(Submit("batch").exit_code, 0);
  ASSERT_TRUE(running(1, "batch"));
  ASSERT_EQ(Submit("batch").exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    return reason_of(2, "batch") ==
           "tenant batch runs 1 job, the most 1 allowed at once (policy tenant batch "
           "limits.max_running)";
  })) << reason_of(2, "batch");

  ASSERT_EQ(Submit("alice").exit_code, 0);  // the user's second running job
  ASSERT_TRUE(running(1, "alice"));
  // batch's first ends: its second starts (the tenant runs none, the user one).
  ASSERT_EQ(cluster_.Snnctl({"cancel", "1"}, "batch").exit_code, 0);
  ASSERT_TRUE(running(2, "batch")) << reason_of(2, "batch");
  // The user runs two now: a third waits for the user's limit.
  ASSERT_EQ(Submit("alice").exit_code, 0);
  const std::string user = cluster_.Show(1, "alice")->spec().user();
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    return reason_of(2, "alice") == "user " + user +
                                        " runs 2 jobs, the most 2 allowed at once (policy "
                                        "limits.per_user.max_running)";
  })) << reason_of(2, "alice");
}

}  // namespace
}  // namespace snn::testing
