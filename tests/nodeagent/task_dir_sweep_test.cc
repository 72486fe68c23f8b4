// Task directories on the node: removed once their task ended longer ago than the keep time,
// never while the agent holds the task or its end is not acknowledged, and without following a
// link a task left.
#include "nodeagent/tasks/task_dir_sweep.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <filesystem>
#include <fstream>

namespace snn {
namespace {

constexpr int64_t kDay = 86400 * 1000;

class TaskDirSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/snn_sweep_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    std::filesystem::create_directories(root_ + "/tasks");
    std::ofstream(root_ + "/precious") << "outside";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // A task directory last changed at `mtime_s` (seconds since the epoch).
  void Make(const std::string& name, time_t mtime_s, bool record = false) {
    const std::string dir = root_ + "/tasks/" + name;
    std::filesystem::create_directories(dir + "/output/deep");
    std::ofstream(dir + "/stdout") << "out";
    std::filesystem::create_symlink(root_ + "/precious", dir + "/output/deep/link");
    if (record) std::ofstream(dir + "/task.pb") << "record";
    struct utimbuf times {
      mtime_s, mtime_s
    };
    ASSERT_EQ(utime(dir.c_str(), &times), 0);
  }
  bool Exists(const std::string& name) { return std::filesystem::exists(root_ + "/tasks/" + name); }

  std::string root_;
};

TEST_F(TaskDirSweepTest, RemovesOnlyTheDirectoriesOfTasksThatEndedLongerAgoThanTheKeepTime) {
  const time_t now_s = 100 * 86400;
  const int64_t now_ms = int64_t{now_s} * 1000;
  Make("lab-a.job1.task0.try1", now_s - 31 * 86400);        // ended 31 days ago
  Make("lab-a.job2.task0.try1", now_s - 29 * 86400);        // 29 days ago: kept
  Make("lab-a.job3.task0.try1", now_s - 40 * 86400, true);  // not acknowledged: kept
  Make("lab-a.job4.task0.try1", now_s - 40 * 86400);        // the agent holds it: kept
  Make("not-a-task-dir", now_s - 40 * 86400);               // not ours: kept
  Make("lab-b.job7.task1.try12", now_s - 90 * 86400);       // long ago
  EXPECT_EQ(SweepTaskDirs(root_ + "/tasks", now_ms, 30 * kDay, {"lab-a.job4.task0.try1"}), 2);
  EXPECT_FALSE(Exists("lab-a.job1.task0.try1"));
  EXPECT_FALSE(Exists("lab-b.job7.task1.try12"));
  for (const char* kept : {"lab-a.job2.task0.try1", "lab-a.job3.task0.try1",
                           "lab-a.job4.task0.try1", "not-a-task-dir"}) {
    EXPECT_TRUE(Exists(kept)) << kept;
  }
  // The links the tasks left were removed, not followed.
  std::ifstream precious(root_ + "/precious");
  std::string text;
  precious >> text;
  EXPECT_EQ(text, "outside");
}

TEST_F(TaskDirSweepTest, NoTasksDirectoryIsNothingToDo) {
  EXPECT_EQ(SweepTaskDirs(root_ + "/none", 0, kDay, {}), 0);
}

}  // namespace
}  // namespace snn
