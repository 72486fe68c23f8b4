// Core-hours in a sliding window with real daemons (issue 40): a job that could never fit a
// tenant's max_core_hours is refused at submit with one line; past the limit (used, plus what
// the running jobs may still use up to their time limits) a job waits, its reason naming the
// limit, and starts once a running one ends early; what ended is read back from the usage
// records after a master restart; policy show says the limit.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

// 0.1 core-hours = 360 core-seconds in any hour: three one-core jobs of 100 s time limit.
constexpr char kPolicy[] = R"(tenants:
  - name: lab
    limits: {max_core_hours: 0.1, window: 1h}
)";

class CoreHourLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(cluster_.dir() + "/policy.yaml") << kPolicy;
    StartMaster();
    cluster_.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }
  void StartMaster() { cluster_.StartMaster({"--policy_file=" + cluster_.dir() + "/policy.yaml"}); }
  // A one-core job that runs at least `at_least_s` seconds, and until `gate` exists.
  CliRun Submit(const std::string& time_limit, const std::string& gate, int at_least_s = 0) {
    const std::string path = cluster_.dir() + "/j.yaml";
    std::ofstream(path) << "name: j\ntime_limit: " << time_limit
                        << "\ntask:\n  command: /bin/sh\n  args: [\"-c\", \"sleep " << at_least_s
                        << "; while [ ! -e " << gate
                        << " ]; do sleep 0.05; done\"]\n"
                           "  resources: {cores: 1, ksps: 10, streams: 1}\n";
    return cluster_.Snnctl({"submit", path}, "lab");
  }
  v1::JobState StateOf(uint64_t id) {
    auto job = cluster_.Show(id, "lab");
    return job.ok() ? job->state() : v1::JOB_STATE_UNSPECIFIED;
  }
  std::string ReasonOf(uint64_t id) {
    auto job = cluster_.Show(id, "lab");
    return job.ok() ? job->reason() : std::string();
  }

  TestCluster cluster_;
};

TEST_F(CoreHourLimitsTest, PastTheLimitAJobWaitsSayingWhyAndTheUseOutlivesARestart) {
  CliRun big = Submit("10m", "/nonexistent");  // 600 core-seconds: never fits 360
  EXPECT_EQ(big.exit_code, 1);
  EXPECT_EQ(big.err,
            "snnctl: this job may use 0.167 core-hours (1 core for 10m), more than tenant lab "
            "may use in 1h, 0.1 (policy tenant lab limits.max_core_hours): ask for fewer cores "
            "or a shorter time_limit\n");
  const std::string first = cluster_.dir() + "/first", second = cluster_.dir() + "/second";
  // 1 and 2 use 2 core-seconds or more each, which a restart must not forget.
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(Submit("100s", i < 2 ? first : second, i < 2 ? 2 : 0).exit_code, 0);
  }
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    return StateOf(1) == v1::RUNNING && StateOf(2) == v1::RUNNING && StateOf(3) == v1::RUNNING;
  }));
  ASSERT_EQ(Submit("100s", second).exit_code, 0);  // 4: 400 core-seconds would pass 360
  const std::string waiting =
      "tenant lab has used or holds 0.0833 of 0.1 core-hours in 1h; this job needs 0.0278 "
      "(policy tenant lab limits.max_core_hours)";
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return ReasonOf(4) == waiting; })) << ReasonOf(4);
  // Its forecast does not guess when used core-time leaves the window: no start, and why.
  CliRun table = cluster_.Snnctl({"jobs", "--start"}, "lab");
  std::istringstream lines(table.out);
  std::string line, row;
  while (std::getline(lines, line)) {
    if (line.rfind("4 ", 0) == 0) row = line;
  }
  EXPECT_TRUE(row.size() > 6 && row.substr(row.size() - 6) == " limit") << table.out;
  CliRun show = cluster_.Snnctl({"show", "4"}, "lab");
  EXPECT_NE(show.out.find("none: a core-hour limit holds it back"), std::string::npos) << show.out;
  // Two end early: what they used (well under their 200 core-seconds) counts, and 4 starts.
  std::ofstream(first) << "";
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return StateOf(4) == v1::RUNNING; })) << ReasonOf(4);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return StateOf(1) == v1::COMPLETED; }));
  // 5 fits (3, 4 and 5 hold 300, 1 and 2 used a little); 6 waits. What ended, read back from
  // the usage records after a restart, still counts.
  ASSERT_EQ(Submit("100s", second).exit_code, 0);
  ASSERT_EQ(Submit("100s", second).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    return StateOf(5) == v1::RUNNING &&
           ReasonOf(6).find("limits.max_core_hours") != std::string::npos;
  })) << ReasonOf(6);
  const std::string before = ReasonOf(6);
  EXPECT_EQ(before.find("has used or holds 0.0833 "), std::string::npos) << before;
  cluster_.StopMaster();
  StartMaster();
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return ReasonOf(6) == before; }))
      << ReasonOf(6) << " (before the restart: " << before << ")";
  CliRun policy = cluster_.Snnctl({"policy", "show"});
  EXPECT_NE(policy.out.find("at most 0.1 core-hours in any 1h"), std::string::npos) << policy.out;
  std::ofstream(second) << "";
}

}  // namespace
}  // namespace snn::testing
