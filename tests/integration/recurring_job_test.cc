// A recurring job with real daemons (issue 40): it waits saying when it next runs; when its
// schedule comes (every minute here, so the test waits for the next minute to begin) the
// master submits a run, which runs as a job of its own; show prints both sides. A calibration
// job's `sets_attribute` marks the boards it ran on when it completes, and later jobs' constraints
// read the mark.
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
  std::ofstream(path) << "name: health\nschedule: \"* * * * *\"\nsets_attribute: calibrated_at\n"
                         "task: {command: /bin/true, resources: {cores: 1, ksps: 10}}\n";
  const std::string fresh = cluster.dir() + "/fresh.yaml";
  std::ofstream(fresh) << "name: fresh\nconstraints: \"calibrated_at >= '2026-01-01T00:00Z'\"\n"
                          "task: {command: /bin/true, resources: {cores: 1, ksps: 10}}\n";
  CliRun early = cluster.Snnctl({"submit", fresh});
  EXPECT_NE(early.exit_code, 0);
  EXPECT_NE(early.err.find("(its boards have none reports calibrated_at)"), std::string::npos)
      << early.err;
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
  // The run marked its board; a job that wants a calibrated board now runs.
  CliRun pool = cluster.Snnctl({"pool", "status", "-o", "json"});
  EXPECT_NE(pool.out.find("\"calibrated_at\": \"20"), std::string::npos) << pool.out;
  CliRun table = cluster.Snnctl({"pool", "status"});
  EXPECT_NE(table.out.find(" ATTRIBUTES"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" MARKS\n"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("calibrated_at=20"), std::string::npos) << table.out;
  CliRun later = cluster.Snnctl({"submit", fresh});
  ASSERT_EQ(later.exit_code, 0) << later.err;
  ASSERT_TRUE(cluster.WaitForState(3, v1::COMPLETED)) << cluster.Show(3)->reason();
}

}  // namespace
}  // namespace snn::testing
