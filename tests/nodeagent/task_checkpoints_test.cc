// Checkpoint directories: created private, reused by the next attempt, refused when a link sits
// in their place; the newest file is found; removal never follows a link the task left; the
// sweep removes what is stale, and only that.
#include "nodeagent/tasks/task_checkpoints.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/base/clock.h"

namespace snn {
namespace {

namespace fs = std::filesystem;

class CheckpointStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() /
            ("ckpt_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    fs::create_directories(base_);
  }
  void TearDown() override { fs::remove_all(base_); }
  RunAs Me() const {
    RunAs who;
    who.uid = geteuid();
    who.gid = getegid();
    return who;
  }
  fs::path base_;
};

TEST_F(CheckpointStoreTest, APrivateDirectoryThatTheNextAttemptFindsAgain) {
  CheckpointStore store((base_ / "root").string(), 3600'000);
  ASSERT_TRUE(store.Prepare({"t", 7, 0}, Me()).ok());
  const std::string dir = store.DirFor({"t", 7, 0});
  EXPECT_EQ(dir, (base_ / "root" / "t.job7.task0").string());
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(store.Latest({"t", 7, 0}).file().empty());
  std::ofstream(dir + "/old") << "1";
  const auto then = fs::last_write_time(dir + "/old");
  std::ofstream(dir + "/new") << "12345";
  fs::last_write_time(dir + "/new", then + std::chrono::seconds(5));
  fs::create_directory(dir + "/sub");  // directories are not checkpoints
  ASSERT_TRUE(store.Prepare({"t", 7, 0}, Me()).ok()) << "the next attempt reuses it";
  const v1::Checkpoint latest = store.Latest({"t", 7, 0});
  EXPECT_EQ(latest.file(), "new");
  EXPECT_EQ(latest.bytes(), 5u);
  EXPECT_EQ(latest.dir(), dir);
}

TEST_F(CheckpointStoreTest, ALinkInTheDirectorysPlaceIsRefused) {
  CheckpointStore store((base_ / "root").string(), 3600'000);
  fs::create_directories(base_ / "root");
  fs::create_directories(base_ / "elsewhere");
  fs::create_directory_symlink(base_ / "elsewhere", base_ / "root" / "t.job3.task1");
  const Status s = store.Prepare({"t", 3, 1}, Me());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is not a directory"), std::string::npos) << s.message();
}

TEST_F(CheckpointStoreTest, RemovalNeverFollowsALinkTheTaskLeft) {
  CheckpointStore store((base_ / "root").string(), 3600'000);
  ASSERT_TRUE(store.Prepare({"t", 5, 0}, Me()).ok());
  fs::create_directories(base_ / "precious");
  std::ofstream(base_ / "precious" / "keep") << "x";
  const fs::path dir = store.DirFor({"t", 5, 0});
  fs::create_directory_symlink(base_ / "precious", dir / "link");
  fs::create_directories(dir / "deep" / "er");
  std::ofstream(dir / "deep" / "er" / "file") << "y";
  store.Remove({"t", 5, 0});
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(fs::exists(base_ / "precious" / "keep"));
}

TEST_F(CheckpointStoreTest, TheSweepRemovesStaleDirectoriesOnly) {
  const int64_t hour = 3600'000;
  CheckpointStore store((base_ / "root").string(), 24 * hour);
  for (uint64_t job : {1, 2, 3}) ASSERT_TRUE(store.Prepare({"t", job, 0}, Me()).ok());
  ASSERT_TRUE(store.Prepare({"lab.a-1", 4, 2}, Me()).ok());
  EXPECT_EQ(store.DirFor({"lab.a-1", 4, 2}), (base_ / "root" / "lab.a-1.job4.task2").string());
  fs::create_directory(base_ / "root" / "job9.task0");      // an older agent's name
  fs::create_directory(base_ / "root" / "keep.job9.task");  // not a checkpoint's name
  fs::create_directory(base_ / "root" / ".job9.task0");     // nor this (no tenant)
  std::ofstream(base_ / "root" / "notes.txt") << "not a checkpoint directory";
  for (const char* dir : {"job9.task0", "keep.job9.task", ".job9.task0"}) {
    fs::last_write_time(
        base_ / "root" / dir,
        fs::file_time_type::clock::from_sys(std::chrono::sys_time<std::chrono::milliseconds>(
            std::chrono::milliseconds(SystemClock().NowMs()))) -
            std::chrono::hours(100));
  }
  const int64_t now = SystemClock().NowMs();
  store.Touch({"t", 1, 0}, now - 48 * hour);        // stale
  store.Touch({"t", 2, 0}, now - 48 * hour);        // stale, but its task runs here
  store.Touch({"t", 3, 0}, now - 1 * hour);         // fresh
  store.Touch({"lab.a-1", 4, 2}, now - 48 * hour);  // stale
  fs::last_write_time(
      base_ / "root" / "notes.txt",
      fs::file_time_type::clock::from_sys(std::chrono::sys_time<std::chrono::milliseconds>(
          std::chrono::milliseconds(SystemClock().NowMs()))) -
          std::chrono::hours(100));
  EXPECT_EQ(store.Sweep(now, {store.DirFor({"t", 2, 0})}), 3);
  EXPECT_FALSE(fs::exists(store.DirFor({"t", 1, 0})));
  EXPECT_FALSE(fs::exists(store.DirFor({"lab.a-1", 4, 2})));
  EXPECT_FALSE(fs::exists(base_ / "root" / "job9.task0"));
  EXPECT_TRUE(fs::exists(base_ / "root" / "keep.job9.task"));
  EXPECT_TRUE(fs::exists(base_ / "root" / ".job9.task0"));
  EXPECT_TRUE(fs::exists(store.DirFor({"t", 2, 0})));
  EXPECT_TRUE(fs::exists(store.DirFor({"t", 3, 0})));
  EXPECT_TRUE(fs::exists(base_ / "root" / "notes.txt"));
}

}  // namespace
}  // namespace snn
