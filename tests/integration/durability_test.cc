// Kill -9 the master under load: every acknowledged job is there afterwards in the state it had
// (or a later one), the tasks agents report on re-registering are kept, and no job runs twice.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "master/jobs/job_table.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

int LinesIn(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

bool IsSuccessor(v1::JobState before, const v1::JobRecord& after, uint32_t requeues_before) {
  if (after.state() == before) return true;
  if (IsTerminal(before)) return false;
  if (after.state() == v1::PENDING) return after.requeue_count() > requeues_before;
  return before == v1::PENDING || after.state() != v1::RUNNING;
}

TEST(DurabilityTest, AcknowledgedJobsSurviveSigkillAndNothingRunsTwice) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", SmallBoards(2, 4, 1000, 4));
  cluster.StartAgent("node2", SmallBoards(1, 8, 4000, 8));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 2; }));
  const std::string runs = cluster.dir() + "/runs";
  std::filesystem::create_directories(runs);

  constexpr int kJobs = 200;
  std::set<uint64_t> acknowledged;
  {
    auto client = cluster.Client();
    for (int i = 0; i < kJobs; ++i) {
      v1::SubmitRequest req;
      *req.mutable_spec() =
          ShellJob("echo $SNN_ATTEMPT >> " + runs + "/$SNN_GLOBAL_JOB_ID; sleep 0.4");
      auto resp = client->Call(rpc::kJobSubmit, req);
      ASSERT_TRUE(resp.ok()) << resp.status().ToString();
      acknowledged.insert(resp->job_id());
    }
  }
  auto before = cluster.ListAll();
  ASSERT_TRUE(before.ok());
  cluster.KillMaster();
  cluster.StartMaster();

  auto after = cluster.ListAll();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  std::map<uint64_t, v1::JobRecord> now;
  for (const auto& job : after->jobs()) now[job.id()] = job;
  int running_at_kill = 0;
  for (const auto& old : before->jobs()) {
    ASSERT_TRUE(now.count(old.id())) << "job " << old.id() << " was lost";
    const v1::JobRecord& job = now[old.id()];
    EXPECT_TRUE(IsSuccessor(old.state(), job, old.requeue_count()))
        << "job " << old.id() << " went from " << v1::JobState_Name(old.state()) << " to "
        << v1::JobState_Name(job.state());
    if (IsTerminal(old.state())) {
      EXPECT_EQ(job.history_size(), old.history_size());
      EXPECT_EQ(job.end_ms(), old.end_ms());
    }
    running_at_kill += old.state() == v1::RUNNING ? 1 : 0;
  }
  for (uint64_t id : acknowledged)
    EXPECT_TRUE(now.count(id)) << "acknowledged job " << id << " lost";
  EXPECT_EQ(now.size(), acknowledged.size()) << "jobs appeared that nobody submitted";
  EXPECT_GT(running_at_kill, 0) << "the kill should catch jobs running";

  ASSERT_TRUE(TestCluster::WaitUntil(
      [&] {
        auto list = cluster.ListAll();
        if (!list.ok()) return false;
        for (const auto& job : list->jobs()) {
          if (job.state() != v1::COMPLETED) return false;
        }
        return true;
      },
      90000));
  auto final_list = cluster.ListAll();
  std::map<uint64_t, v1::JobRecord> final_jobs;
  for (const auto& job : final_list->jobs()) final_jobs[job.id()] = job;
  for (const auto& old : before->jobs()) {
    EXPECT_EQ(LinesIn(runs + "/" + std::to_string(old.id())), 1)
        << "job " << old.id() << " ran " << LinesIn(runs + "/" + std::to_string(old.id()))
        << " times";
    // A task the agent reported on re-registering was kept, not launched again.
    if (old.state() == v1::RUNNING && old.tasks_size() > 0 &&
        old.tasks(0).state() == v1::TASK_RUNNING) {
      EXPECT_EQ(final_jobs[old.id()].attempt(), old.attempt()) << "job " << old.id();
    }
  }
}

}  // namespace
}  // namespace snn::testing
