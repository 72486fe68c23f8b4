// A task's results as the agent lists and reads them: the output directory belongs to the task's
// user, so links are never followed, names cannot leave it, and files of another owner are not
// the task's.
#include "nodeagent/tasks/task_results.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nodeagent/tasks/task_output.h"

namespace snn {
namespace {

class TaskResultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/snn_results_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    data_ = tmpl;
    request_.set_tenant("lab-a");
    request_.set_tenant_job_id(7);
    request_.set_index(0);
    request_.set_attempt(1);
    out_ = data_ + "/tasks/" + TaskDirName("lab-a", 7, 0, 1) + "/output";
    std::filesystem::create_directories(out_ + "/deep/er");
    std::ofstream(out_ + "/a.txt") << "alpha";
    std::ofstream(out_ + "/deep/er/b.bin") << std::string(3000, 'b');
    std::ofstream(data_ + "/secret") << "not the task's";
    std::filesystem::create_directory_symlink(data_, out_ + "/linked_dir");
    std::filesystem::create_symlink(data_ + "/secret", out_ + "/linked_file");
  }
  void TearDown() override { std::filesystem::remove_all(data_); }

  Result<v1::TaskOutputResponse> Read(const std::string& name, uint64_t offset = 0,
                                      uint32_t max = 0) {
    v1::TaskOutputRequest r = request_;
    r.set_result(name);
    r.set_offset(offset);
    r.set_max_bytes(max);
    return ReadTaskResults(data_, r);
  }

  std::string data_, out_;
  v1::TaskOutputRequest request_;
};

TEST_F(TaskResultsTest, ListsTheTasksFilesAndNoLink) {
  v1::TaskOutputRequest list = request_;
  list.set_list_results(true);
  auto listed = ReadTaskResults(data_, list);
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  ASSERT_EQ(listed->results_size(), 2);
  EXPECT_EQ(listed->results(0).name(), "a.txt");
  EXPECT_EQ(listed->results(0).size(), 5u);
  EXPECT_EQ(listed->results(1).name(), "deep/er/b.bin");
  EXPECT_EQ(listed->results(1).size(), 3000u);
}

TEST_F(TaskResultsTest, ReadsASliceAndNothingOutsideTheDirectory) {
  auto a = Read("a.txt");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->data(), "alpha");
  auto b = Read("deep/er/b.bin", 1000, 500);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data(), std::string(500, 'b'));
  EXPECT_EQ(b->size(), 3000u);
  // Links (to a file, through a directory), names that climb, absolute ones: none is read.
  for (const std::string name : {"linked_file", "linked_dir/secret", "../../../secret",
                                 "deep/../a.txt", "/etc/passwd", "", "deep//er/b.bin", "deep"}) {
    auto r = Read(name);
    EXPECT_FALSE(r.ok()) << name;
    if (!r.ok()) {
      EXPECT_TRUE(r.status().code() == Code::kNotFound ||
                  r.status().code() == Code::kInvalidArgument)
          << name << ": " << r.status().message();
    }
  }
}

TEST_F(TaskResultsTest, AFileOfAnotherOwnerIsNotTheTasks) {
  if (geteuid() != 0) GTEST_SKIP() << "changes a file's owner: needs root";
  // The directory is the task user's (uid 1 here); a file someone else owns (a hard link to a
  // file of root's, say) is neither listed nor read.
  ASSERT_EQ(chown(out_.c_str(), 1, 1), 0);
  for (const std::string& path :
       {out_ + "/a.txt", out_ + "/deep", out_ + "/deep/er", out_ + "/deep/er/b.bin"}) {
    ASSERT_EQ(chown(path.c_str(), 1, 1), 0);
  }
  std::ofstream(out_ + "/roots") << "root's";
  v1::TaskOutputRequest list = request_;
  list.set_list_results(true);
  auto listed = ReadTaskResults(data_, list);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->results_size(), 2);
  EXPECT_FALSE(Read("roots").ok());
  EXPECT_TRUE(Read("a.txt").ok());
}

TEST_F(TaskResultsTest, ATaskWithoutAnOutputDirectoryIsNotFound) {
  v1::TaskOutputRequest other = request_;
  other.set_attempt(2);
  other.set_list_results(true);
  auto r = ReadTaskResults(data_, other);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace snn
