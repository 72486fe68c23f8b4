#include "master/store/group_commit.h"

#include <gtest/gtest.h>

#include <future>
#include <vector>

namespace snn {
namespace {

// A write that the test lets through one group at a time.
struct GatedWriter {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<size_t> group_sizes;  // callers per group written
  std::vector<std::string> keys;    // in the order written
  int open = 0;                     // groups the test lets through
  int entered = 0;                  // groups that reached the gate

  GroupCommitQueue::WriteGroup Write() {
    return [this](StoreBatch merged, size_t callers, std::function<void(Status)> finish) {
      {
        std::unique_lock lock(mu);
        ++entered;
        cv.notify_all();
        cv.wait(lock, [&] { return open > 0; });
        --open;
        group_sizes.push_back(callers);
        for (const auto& w : merged) keys.push_back(w.key);
      }
      cv.notify_all();
      finish(Status::Ok());
    };
  }
  // Waits until the writer holds a group at the gate.
  void AwaitWriter() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return entered > 0; });
  }
  void Let(int groups) {
    {
      std::lock_guard lock(mu);
      open += groups;
    }
    cv.notify_all();
  }
};

std::future<Status> Commit(GroupCommitQueue& queue, const std::string& key) {
  auto done = std::make_shared<std::promise<Status>>();
  auto answer = done->get_future();
  queue.Commit({StoreWrite{key, "v"}}, [done](Status s) { done->set_value(std::move(s)); });
  return answer;
}

TEST(GroupCommitQueueTest, WhatQueuesWhileAWriteRunsGoesOutAsOneGroupInOrder) {
  GatedWriter writer;
  GroupCommitQueue queue(writer.Write(), Unavailable("closed"));
  auto first = Commit(queue, "a");
  writer.AwaitWriter();  // the writer holds "a"; these queue behind it
  std::vector<std::future<Status>> rest;
  for (const char* key : {"b", "c", "d"}) rest.push_back(Commit(queue, key));
  writer.Let(2);
  EXPECT_TRUE(first.get().ok());
  for (auto& r : rest) EXPECT_TRUE(r.get().ok());
  queue.Close();
  EXPECT_EQ(writer.keys, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(writer.group_sizes, (std::vector<size_t>{1, 3}));
}

TEST(GroupCommitQueueTest, ARefusedQueueFailsWhatWaitsAndWhatComesLater) {
  GatedWriter writer;
  GroupCommitQueue queue(writer.Write(), Unavailable("closed"));
  auto first = Commit(queue, "a");
  writer.AwaitWriter();  // "a" is being written; "b" waits behind it
  auto waiting = Commit(queue, "b");
  queue.Refuse(Unavailable("deposed"));
  auto later = Commit(queue, "c");
  EXPECT_EQ(later.get().message(), "deposed");
  writer.Let(2);
  EXPECT_TRUE(first.get().ok());
  EXPECT_EQ(waiting.get().message(), "deposed");
  queue.Close();
  EXPECT_EQ(writer.keys, (std::vector<std::string>{"a"}));
}

TEST(GroupCommitQueueTest, CloseWritesWhatIsQueuedThenRefusesMore) {
  GatedWriter writer;
  writer.Let(100);
  auto queue = std::make_unique<GroupCommitQueue>(writer.Write(), Unavailable("store closed"));
  std::vector<std::future<Status>> answers;
  for (int i = 0; i < 50; ++i) answers.push_back(Commit(*queue, "k" + std::to_string(i)));
  queue->Close();
  for (auto& a : answers) EXPECT_TRUE(a.get().ok());
  EXPECT_EQ(writer.keys.size(), 50u);
  EXPECT_EQ(Commit(*queue, "late").get().message(), "store closed");
}

}  // namespace
}  // namespace snn
