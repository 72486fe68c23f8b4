// Job arrays with real daemons (issue 40): an array runs each of its elements as a job of its
// own with SNN_ARRAY_* set, never more than %K at once; jobs folds what has not started into
// one row; elements are named ARRAY_INDEX; slices are held, released and cancelled; bad
// indices are refused with one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

class JobArrayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    cluster_.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }
  std::string JobFile(const std::string& name, const std::string& array, const std::string& command,
                      const std::string& more = "") {
    const std::string path = cluster_.dir() + "/" + name + ".yaml";
    std::ofstream(path) << more << "name: " << name
                        << (array.empty() ? "" : "\narray: \"" + array + "\"")
                        << "\ntask:\n  command: /bin/sh\n  args: [\"-c\", \"" << command
                        << "\"]\n  resources: {cores: 1, ksps: 10, streams: 1}\n";
    return path;
  }
  // Elements of array `id` not ended, from the job list.
  size_t Unfinished(uint64_t id) {
    auto all = cluster_.ListAll();
    size_t n = 0;
    if (!all.ok()) return 0;
    for (const auto& j : all->jobs()) {
      n += j.array_job_id() == id && (j.state() == v1::PENDING || j.state() == v1::RUNNING);
    }
    return n;
  }

  TestCluster cluster_;
};

TEST_F(JobArrayTest, ElementsRunWithTheirIndexNeverMoreThanKAtOnce) {
  CliRun submitted = cluster_.Snnctl(
      {"submit", JobFile("sweep", "0-5%2",
                         "echo $SNN_ARRAY_TASK_ID $SNN_ARRAY_TASK_COUNT $SNN_ARRAY_TASK_MIN "
                         "$SNN_ARRAY_TASK_MAX $SNN_ARRAY_JOB_ID; sleep 0.3; echo "
                         "$SNN_ARRAY_TASK_ID > $SNN_OUTPUT_DIR/index")});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  size_t most = 0;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    most = std::max(most, Unfinished(1));
    auto array = cluster_.Show(1);
    return array.ok() && array->state() == v1::COMPLETED;
  })) << cluster_.Show(1)->reason();
  EXPECT_LE(most, 2u);
  auto all = cluster_.ListAll();
  ASSERT_TRUE(all.ok());
  std::set<uint32_t> indices;
  for (const auto& j : all->jobs()) {
    if (j.array_job_id() != 1) continue;
    EXPECT_EQ(j.state(), v1::COMPLETED);
    indices.insert(j.array_task_id());
  }
  EXPECT_EQ(indices.size(), 6u);
  CliRun logs = cluster_.Snnctl({"logs", "1_4"});
  EXPECT_NE(logs.out.find("4 6 0 5 1\n"), std::string::npos) << logs.out;
  CliRun shown = cluster_.Snnctl({"show", "1"});
  EXPECT_NE(shown.out.find("6 elements: 6 started (6 completed, 0 failed, 0 cancelled)"),
            std::string::npos)
      << shown.out;
  // An element's results, by its name.
  CliRun results = cluster_.Snnctl({"results", "1_4", "--out", cluster_.dir() + "/element-4"});
  ASSERT_EQ(results.exit_code, 0) << results.err;
  std::ifstream index(cluster_.dir() + "/element-4/index");
  std::string written;
  std::getline(index, written);
  EXPECT_EQ(written, "4");
  // Usage and report per array: its elements' attempts, named ARRAY_INDEX; no other job's.
  ASSERT_EQ(cluster_.Snnctl({"submit", "--wait", JobFile("other", "", "true")}).exit_code, 0);
  CliRun usage = cluster_.Snnctl({"usage", "--job", "1", "--csv"});
  ASSERT_EQ(usage.exit_code, 0) << usage.err;
  EXPECT_EQ(std::count(usage.out.begin(), usage.out.end(), '\n'), 7) << usage.out;  // and a header
  EXPECT_NE(usage.out.find("\n1_4,0,1,"), std::string::npos) << usage.out;
  CliRun report = cluster_.Snnctl({"report", "--job", "1", "-o", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("\"jobs\": 6"), std::string::npos) << report.out;
  CliRun other = cluster_.Snnctl({"report", "--job", "8", "-o", "json"});
  EXPECT_NE(other.out.find("\"jobs\": 1"), std::string::npos) << other.out;
}

TEST_F(JobArrayTest, SlicesAreHeldReleasedAndCancelledAndPendingElementsFoldIntoOneRow) {
  ASSERT_EQ(
      cluster_.Snnctl({"submit", JobFile("long", "", "sleep 600"), "--array", "0-99%3"}).exit_code,
      0);
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return Unfinished(1) == 3; }));
  CliRun jobs = cluster_.Snnctl({"jobs"});
  EXPECT_NE(jobs.out.find("1_[3-99%3]"), std::string::npos) << jobs.out;
  EXPECT_NE(jobs.out.find("1_0 "), std::string::npos) << jobs.out;
  CliRun element = cluster_.Snnctl({"show", "1_1"});
  EXPECT_NE(element.out.find("Array:       1_1 (element of array 1)"), std::string::npos)
      << element.out;
  CliRun waiting = cluster_.Snnctl({"show", "1_50"});
  EXPECT_EQ(waiting.err, "snnctl: element 50 of array 1 has not started (snnctl show 1)\n");
  CliRun none = cluster_.Snnctl({"show", "1_100"});
  EXPECT_EQ(none.err, "snnctl: array 1 has no element 100 (its indices: 0-99)\n");
  ASSERT_EQ(cluster_.Snnctl({"hold", "1_[10-99]"}).exit_code, 0);
  ASSERT_EQ(cluster_.Snnctl({"cancel", "1_[0-4]"}).exit_code, 0);  // 0-2 running, 3-4 waiting
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return Unfinished(1) == 3; }));  // 5, 6, 7
  CliRun shown = cluster_.Snnctl({"show", "1"});
  EXPECT_NE(shown.out.find("100 elements: 6 started (0 completed, 0 failed, 5 cancelled), held "
                           "10-99"),
            std::string::npos)
      << shown.out;
  ASSERT_EQ(cluster_.Snnctl({"release", "1_[10-99]"}).exit_code, 0);
  CliRun again = cluster_.Snnctl({"release", "1_[10-99]"});
  EXPECT_EQ(again.err, "snnctl: array 1 has no element held in 10-99\n");
  ASSERT_EQ(cluster_.Snnctl({"cancel", "1"}).exit_code, 0);
  ASSERT_TRUE(cluster_.WaitForState(1, v1::CANCELLED));
  EXPECT_EQ(Unfinished(1), 0u);
}

// after_corr: element N of the second array waits for element N of the first, and goes with it
// if it fails.
TEST_F(JobArrayTest, ElementsWaitForTheirCorrespondentsAndGoWithThem) {
  const std::string go = cluster_.dir() + "/go";
  ASSERT_EQ(cluster_
                .Snnctl({"submit", JobFile("first", "0-3",
                                           "while [ ! -e " + go +
                                               " ]; do sleep 0.05; done; test "
                                               "$SNN_ARRAY_TASK_ID != 2")})
                .exit_code,
            0);  // 1, its elements 2-5
  CliRun second =
      cluster_.Snnctl({"submit", JobFile("second", "0-3", "true", "depends: {after_corr: [1]}\n")});
  ASSERT_EQ(second.exit_code, 0) << second.err;  // 6
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return Unfinished(1) == 4; }));
  CliRun waiting = cluster_.Snnctl({"show", "6"});
  EXPECT_NE(waiting.out.find("waiting for element 1_0 to complete (after_corr)"), std::string::npos)
      << waiting.out;
  CliRun plain =
      cluster_.Snnctl({"submit", JobFile("plain", "", "true", "depends: {after_corr: [1]}\n")});
  EXPECT_EQ(plain.err,
            "snnctl: after_corr: only an array waits element by element (add array:, or use "
            "after_ok)\n");
  std::ofstream(go) << "";
  ASSERT_TRUE(cluster_.WaitForState(6, v1::CANCELLED)) << cluster_.Show(6)->reason();
  auto all = cluster_.ListAll();
  ASSERT_TRUE(all.ok());
  std::set<uint32_t> ran;
  for (const auto& j : all->jobs()) {
    if (j.array_job_id() != 6) continue;
    EXPECT_EQ(j.state(), v1::COMPLETED);
    ran.insert(j.array_task_id());
  }
  EXPECT_EQ(ran, (std::set<uint32_t>{0, 1, 3}));
  CliRun shown = cluster_.Snnctl({"show", "6"});
  EXPECT_NE(shown.out.find("Depends:     after_corr 1\n"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("Elements:    1 element cancelled: element 1_2 it depends on "
                           "(after_corr) ended FAILED\n"),
            std::string::npos)
      << shown.out;
}

TEST_F(JobArrayTest, BadIndicesAreRefusedWithOneLine) {
  CliRun backwards = cluster_.Snnctl({"submit", JobFile("b", "9-2", "true")});
  EXPECT_EQ(backwards.exit_code, 1);
  EXPECT_NE(backwards.err.find("array '9-2': range 9-2 runs backwards"), std::string::npos)
      << backwards.err;
  CliRun big = cluster_.Snnctl({"submit", JobFile("big", "", "true"), "--array", "0-2000000"});
  EXPECT_EQ(big.err, "snnctl: array '0-2000000' has 2000001 elements; at most 1000000\n");
  CliRun cancel = cluster_.Snnctl({"cancel", "1_[x]"});
  EXPECT_NE(cancel.err.find("is not a positive number (or ARRAY_INDEX, ARRAY_[A-B,C])"),
            std::string::npos)
      << cancel.err;
  auto all = cluster_.ListAll();
  EXPECT_EQ(all.ok() ? all->jobs_size() : -1, 0);
}

// What a client other than snnctl may send: a range with step 0 (the master took it, and would
// have divided by zero on a started element in it), a backwards one, or thousands of ranges
// (each checked against every job) are refused, and the master lives on.
TEST_F(JobArrayTest, AMasterSurvivesIndicesNoSnnctlWouldSend) {
  ASSERT_EQ(
      cluster_.Snnctl({"submit", JobFile("long", "", "sleep 600"), "--array", "0-9%1"}).exit_code,
      0);
  auto client = cluster_.Client();
  for (const uint32_t step : {0u, 1u}) {
    v1::CancelRequest cancel;
    cancel.mutable_job()->set_tenant_job_id(1);
    v1::ArrayRange* r = cancel.mutable_job()->add_array_indices();
    r->set_first(step == 0 ? 2 : 9);
    r->set_last(step == 0 ? 5 : 3);  // backwards
    r->set_step(step);
    auto answer = client->Call(rpc::kJobCancel, cancel);
    ASSERT_FALSE(answer.ok());
    EXPECT_NE(answer.status().message().find("are not a range (first <= last, step >= 1)"),
              std::string::npos)
        << answer.status().ToString();
    v1::ShowJobRequest show;
    *show.mutable_job() = cancel.job();
    EXPECT_FALSE(client->Call(rpc::kJobShow, show).ok());
  }
  v1::HoldRequest many;
  many.mutable_job()->set_tenant_job_id(1);
  for (uint32_t i = 0; i < 5000; ++i) {
    v1::ArrayRange* r = many.mutable_job()->add_array_indices();
    r->set_first(i);
    r->set_last(i);
    r->set_step(1);
  }
  auto refused = client->Call(rpc::kJobHold, many);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("at most 256 ranges"), std::string::npos);
  auto shown = cluster_.Show(1);
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();  // the master still answers
  EXPECT_EQ(shown->array_held_size(), 0);
}

}  // namespace
}  // namespace snn::testing
