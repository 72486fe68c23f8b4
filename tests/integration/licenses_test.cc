// Licenses with real daemons (issue 40): the policy counts site-wide resources; a job holds the
// ones it asks for while it runs; one that would go past the count waits saying which, and
// starts when a holder ends; a license the site lacks, or more than it has, is refused at
// submit with one line; policy show lists them.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

constexpr char kPolicy[] = "licenses: {dvs-camera: 1, matlab: 3}\n";

class LicensesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(cluster_.dir() + "/policy.yaml") << kPolicy;
    cluster_.StartMaster({"--policy_file=" + cluster_.dir() + "/policy.yaml"});
    cluster_.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }
  CliRun Submit(const std::string& name, const std::string& licenses) {
    const std::string path = cluster_.dir() + "/" + name + ".yaml";
    std::ofstream(path) << "name: " << name << "\nlicenses: " << licenses
                        << "\ntask:\n  command: /bin/sleep\n  args: [\"600\"]\n"
                           "  resources: {cores: 1, ksps: 10, streams: 1}\n";
    return cluster_.Snnctl({"submit", path});
  }
  bool Running(uint64_t id) {
    return TestCluster::WaitUntil([&] {
      auto job = cluster_.Show(id);
      return job.ok() && job->state() == v1::RUNNING;
    });
  }
  size_t Jobs() {
    auto all = cluster_.ListAll();
    return all.ok() ? static_cast<size_t>(all->jobs_size()) : 0;
  }

  TestCluster cluster_;
};

TEST_F(LicensesTest, AJobPastTheCountWaitsNamingTheLicenseAndStartsWhenAHolderEnds) {
  ASSERT_EQ(Submit("first", "{dvs-camera: 1}").exit_code, 0);
  ASSERT_TRUE(Running(1));
  ASSERT_EQ(Submit("second", "{dvs-camera: 1, matlab: 1}").exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster_.Show(2);
    return job.ok() && job->reason() == "waiting for licenses: dvs-camera 1 (0 of 1 free)";
  })) << cluster_.Show(2)->reason();
  // A job asking only for what is free behind it may start (the camera is all it waits for,
  // and it keeps only the camera back).
  ASSERT_EQ(Submit("third", "{matlab: 2}").exit_code, 0);
  ASSERT_TRUE(Running(3));
  EXPECT_EQ(cluster_.Show(2)->state(), v1::PENDING);
  ASSERT_EQ(cluster_.Snnctl({"cancel", "1"}).exit_code, 0);
  ASSERT_TRUE(Running(2));
  CliRun shown = cluster_.Snnctl({"show", "2"});
  EXPECT_NE(shown.out.find("Licenses:"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("dvs-camera 1, matlab 1"), std::string::npos) << shown.out;
  CliRun policy = cluster_.Snnctl({"policy", "show"});
  EXPECT_NE(policy.out.find("licenses: dvs-camera 1, matlab 3\n"), std::string::npos) << policy.out;
}

TEST_F(LicensesTest, ALicenseTheSiteLacksOrMoreThanItHasIsRefusedWithOneLine) {
  CliRun unknown = Submit("unknown", "{lidar: 1}");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.err,
            "snnctl: unknown license 'lidar' (the policy's licenses: dvs-camera (1), matlab "
            "(3))\n");
  CliRun greedy = Submit("greedy", "{matlab: 4}");
  EXPECT_EQ(greedy.exit_code, 1);
  EXPECT_EQ(greedy.err, "snnctl: licenses: the job asks for 4 matlab, but the site has 3\n");
  CliRun zero = Submit("zero", "{matlab: 0}");
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_NE(zero.err.find("licenses.matlab is 0; it must be between 1 and 1000000"),
            std::string::npos)
      << zero.err;
  CliRun list = Submit("list", "[matlab]");
  EXPECT_EQ(list.exit_code, 1);
  EXPECT_NE(list.err.find("licenses must map names to counts"), std::string::npos) << list.err;
  EXPECT_EQ(Jobs(), 0u) << "a refused submit made a job";
}

}  // namespace
}  // namespace snn::testing
