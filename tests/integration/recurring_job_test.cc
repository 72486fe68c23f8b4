// A recurring job with real daemons (issue 40): it waits saying when it next runs; when its
// schedule comes (every minute here, so the test waits for the next minute to begin) the
// master submits a run, which runs as a job of its own; show prints both sides.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

TEST(RecurringJobTest, EachTimeItComesTheMasterSubmitsARunThatRuns) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  const std::string path = cluster.dir() + "/health.yaml";
  std::ofstream(path) << "name: health\nschedule: \"* * * * *\"\n"
                         "task: {command: /bin/true, resources: {cores: 1, ksps: 10}}\n";
  CliRun submitted = cluster.Snnctl({"submit", path});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster.Show(1);
    return job.ok() && job->reason().rfind("recurring (* * * * *): next run at ", 0) == 0;
  })) << cluster.Show(1)->reason();
  // The next minute begins within 60 s of any moment.
  ASSERT_TRUE(cluster.WaitForState(2, v1::COMPLETED, 90'000)) << cluster.Show(1)->reason();
  EXPECT_EQ(cluster.Show(1)->state(), v1::PENDING);
  CliRun shown = cluster.Snnctl({"show", "1"});
  EXPECT_NE(shown.out.find("Schedule:    * * * * * (UTC); next run "), std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("the last job 2"), std::string::npos) << shown.out;
  CliRun run = cluster.Snnctl({"show", "2"});
  EXPECT_NE(run.out.find("Recurring:   a run of recurring job 1\n"), std::string::npos) << run.out;
  ASSERT_EQ(cluster.Snnctl({"cancel", "1"}).exit_code, 0);
}

}  // namespace
}  // namespace snn::testing
