#include "cli/job_columns.h"

#include <gtest/gtest.h>

#include "cli/command_table.h"
#include "cli/snnctl.h"

namespace snn {
namespace {

TEST(JobColumnsTest, ChosenColumnsInTheirOrderAndUnknownOnesNamed) {
  auto columns = ParseJobColumns("ID, State ,nodes,,exit");
  ASSERT_TRUE(columns.ok()) << columns.status().ToString();
  v1::ListJobsResponse jobs;
  auto* job = jobs.add_jobs();
  job->set_tenant_job_id(7);
  job->set_state(v1::RUNNING);
  auto* task = job->add_tasks();
  task->set_node("n1");
  task->set_board(2);
  EXPECT_EQ(FormatJobColumns(jobs, *columns, 0),
            "JOBID  STATE    NODES  EXIT\n"
            "7      RUNNING  n1/2   -\n");
  auto bad = ParseJobColumns("id,colour");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no column 'colour'; the columns are id,globalid,"),
            std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(ParseJobColumns(" , ").ok());
}

TEST(JobColumnsTest, TheHelpListsEveryColumn) {
  const std::string help = CliUsageText();
  std::string names = JobColumnNames() + ",";
  for (size_t at = 0, comma; (comma = names.find(',', at)) != std::string::npos; at = comma + 1) {
    const std::string name = names.substr(at, comma - at);
    EXPECT_TRUE(help.find(" " + name + ",") != std::string::npos ||
                help.find(" " + name + "\n") != std::string::npos)
        << name;
  }
}

}  // namespace
}  // namespace snn
