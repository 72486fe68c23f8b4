// Board constraints with real daemons (issue 40): the boards file gives boards attributes; a
// job's `constraints:` sends it only to boards that meet them, waits (saying so) while they are
// busy though others are idle, and a constraint no board of the pool meets, or one that does
// not parse, is refused at submit with one line that changes nothing. Operators mark and unmark
// boards (the master's attributes, over the driver's), and jobs follow the marks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <utility>
#include <vector>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

constexpr char kBoards[] = R"(backend: sim
boards:
  - {type: sim-v1, mesh: 4x4, ksps: 1000, streams: 4, attributes: {rev: 2, firmware: "2.4"}}
  - {type: sim-v1, mesh: 4x4, ksps: 1000, streams: 4, attributes: {rev: 3, firmware: "2.10"}}
)";

class BoardConstraintsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    cluster_.StartAgent("node1", kBoards);
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }
  // A job of the whole 4x4 board meeting `constraints`.
  std::string JobFile(const std::string& name, const std::string& constraints) {
    const std::string path = cluster_.dir() + "/" + name + ".yaml";
    std::ofstream(path) << "name: " << name << "\nconstraints: \"" << constraints
                        << "\"\ntask:\n  command: /bin/sleep\n  args: [\"600\"]\n"
                           "  resources: {cores: 16, ksps: 10, streams: 1}\n";
    return path;
  }
  size_t Jobs() {
    auto all = cluster_.ListAll();
    return all.ok() ? static_cast<size_t>(all->jobs_size()) : 0;
  }

  TestCluster cluster_;
};

TEST_F(BoardConstraintsTest, JobsGoOnlyToBoardsThatMeetTheirConstraints) {
  // firmware '2.10' is after '2.4' as a version: only board 1 meets it.
  CliRun first = cluster_.Snnctl({"submit", JobFile("newer", "rev >= 3 && firmware > '2.4'")});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  v1::TaskRecord task = cluster_.WaitForRunningTask(1);
  EXPECT_EQ(task.board(), 1u);
  // The same again waits for board 1, board 0 idle beside it, and says why.
  ASSERT_EQ(cluster_.Snnctl({"submit", JobFile("again", "rev in [3, 4]")}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster_.Show(2);
    return job.ok() && job->reason().find("where rev in [3, 4]") != std::string::npos;
  })) << cluster_.Show(2)->reason();
  EXPECT_EQ(cluster_.Show(2)->state(), v1::PENDING);
  // One that board 0 meets starts there at once; `!` and `node` work too.
  ASSERT_EQ(cluster_.Snnctl({"submit", JobFile("older", "!(rev >= 3) && node == node1")}).exit_code,
            0);
  EXPECT_EQ(cluster_.WaitForRunningTask(3).board(), 0u);
  // Board 1 freed, the waiting job takes it.
  ASSERT_EQ(cluster_.Snnctl({"cancel", "1"}).exit_code, 0);
  EXPECT_EQ(cluster_.WaitForRunningTask(2).board(), 1u);
  CliRun shown = cluster_.Snnctl({"show", "2"});
  EXPECT_NE(shown.out.find("rev in [3, 4]"), std::string::npos) << shown.out;
}

TEST_F(BoardConstraintsTest, AConstraintThatCannotBeMetOrParsedIsRefusedWithOneLine) {
  CliRun never = cluster_.Snnctl({"submit", JobFile("never", "rev >= 4 || firmware == beta")});
  EXPECT_EQ(never.exit_code, 1);
  EXPECT_EQ(never.err,
            "snnctl: no board in pool 'default' meets the constraints 'rev >= 4 || firmware == "
            "beta' (its boards have rev: 2, 3; firmware: 2.10, 2.4)\n");
  CliRun unknown = cluster_.Snnctl({"submit", JobFile("unknown", "serial == A17")});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("(its boards have none reports serial)"), std::string::npos)
      << unknown.err;
  CliRun typo = cluster_.Snnctl({"submit", JobFile("typo", "rev => 3")});
  EXPECT_EQ(typo.exit_code, 1);
  EXPECT_NE(typo.err.find("typo.yaml: constraints: expected ==, !=, <, <=, >, >= or in after "
                          "'rev' at character 5, found '=> 3'\n"),
            std::string::npos)
      << typo.err;
  CliRun unordered = cluster_.Snnctl({"submit", JobFile("unordered", "firmware >= 'beta'")});
  EXPECT_EQ(unordered.exit_code, 1);
  EXPECT_NE(unordered.err.find("or UTC times ('2026-11-28', '2026-11-28T03:00Z'); 'beta' is none"),
            std::string::npos)
      << unordered.err;
  EXPECT_EQ(Jobs(), 0u) << "a refused submit made a job";
}

TEST_F(BoardConstraintsTest, OperatorsMarkAndUnmarkBoardsAndJobsFollowTheMarks) {
  auto attributes = [&] { return cluster_.Snnctl({"pool", "status"}).out; };
  CliRun marked = cluster_.Snnctl({"board", "mark", "node1/0", "calibrated=yes", "rev=4"});
  ASSERT_EQ(marked.exit_code, 0) << marked.err;
  EXPECT_EQ(marked.out, "Board node1/0 marks: calibrated=yes,rev=4\n");
  CliRun table = cluster_.Snnctl({"pool", "status"});
  // The table names the marks after every attribute.
  EXPECT_NE(table.out.find("calibrated=yes,firmware=2.4,rev=4  calibrated,rev\n"),
            std::string::npos)
      << table.out;
  // Which attributes are marks (what unmark can remove): in the board's `marked`.
  auto pool = cluster_.Pool();
  ASSERT_TRUE(pool.ok());
  const auto& names = pool->nodes(0).boards(0).marked();
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.end()),
            (std::vector<std::string>{"calibrated", "rev"}));
  EXPECT_EQ(pool->nodes(0).boards(1).marked_size(), 0);
  // The mark wins over the driver's rev: board 0 meets rev >= 4 now, and only it is calibrated.
  ASSERT_EQ(
      cluster_.Snnctl({"submit", JobFile("marked", "calibrated == yes && rev >= 4")}).exit_code, 0);
  EXPECT_EQ(cluster_.WaitForRunningTask(1).board(), 0u);
  // Bad changes: one line each, and the marks stay as they were.
  const std::string before = attributes();
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"board", "mark", "node1/0", "bad name=1"}, "attribute 'bad name': a name is 1 to 64"},
      {{"board", "mark", "node1/0", "ok=1", "type=x"}, "attribute 'type' is built in"},
      {{"board", "mark", "node1/0", "calibrated"}, "'calibrated' is not NAME=VALUE"},
      {{"board", "mark", "node1/9", "x=1"}, "node node1 has no board 9 (it has 2)"},
      {{"board", "mark", "node7/0", "x=1"}, "no node named 'node7'"},
      {{"board", "unmark", "node1/0", "calibrated", "firmware"},
       "board node1/0 has no mark 'firmware' (only the master's marks can be removed"},
      {{"board", "mark", "node1/0"}, "usage: snnctl board mark NODE/BOARD NAME=VALUE..."},
  };
  for (const auto& [args, error] : refused) {
    CliRun run = cluster_.Snnctl(args);
    EXPECT_EQ(run.exit_code, 1) << args[3];
    EXPECT_NE(run.err.find(error), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
  EXPECT_EQ(attributes(), before);
  if (geteuid() == 0) {  // a user without the operator role
    CliRun user = cluster_.RunSnnctlAs("nobody", {"board", "mark", "node1/1", "calibrated=yes"});
    EXPECT_NE(user.err.find("needs the operator role"), std::string::npos) << user.err;
    EXPECT_EQ(attributes(), before);
  }
  // Unmarked, board 0 has the driver's rev again, and a job that needs the mark cannot be met.
  CliRun unmarked = cluster_.Snnctl({"board", "unmark", "node1/0", "calibrated", "rev"});
  ASSERT_EQ(unmarked.exit_code, 0) << unmarked.err;
  EXPECT_EQ(unmarked.out, "Board node1/0 marks: none\n");
  EXPECT_NE(cluster_.Snnctl({"pool", "status"}).out.find("firmware=2.4,rev=2  "),
            std::string::npos);
  CliRun unmet = cluster_.Snnctl({"submit", JobFile("unmet", "calibrated == yes")});
  EXPECT_NE(unmet.err.find("(its boards have none reports calibrated)"), std::string::npos)
      << unmet.err;
  // Marks are durable: a restarted master still has them.
  ASSERT_EQ(cluster_.Snnctl({"board", "mark", "node1/1", "calibrated=2026-11-28"}).exit_code, 0);
  cluster_.StopMaster();
  cluster_.StartMaster();
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  EXPECT_NE(attributes().find("calibrated=2026-11-28,firmware=2.10,rev=3  calibrated\n"),
            std::string::npos)
      << attributes();
}

}  // namespace
}  // namespace snn::testing
