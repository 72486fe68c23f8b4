#include "master/store/rocks_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <thread>

namespace snn {
namespace {

std::string TempDir() {
  std::string dir = std::filesystem::temp_directory_path() / "snn_store_XXXXXX";
  return mkdtemp(dir.data());
}

TEST(RocksStoreTest, CommittedBatchesSurviveReopen) {
  const std::string dir = TempDir();
  {
    auto store = RocksStore::Open(dir);
    ASSERT_TRUE(store.ok());
    std::promise<Status> done;
    (*store)->Commit({{"job/1", "a"}, {"job/2", "b"}, {"node/x", "n"}},
                     [&](Status s) { done.set_value(s); });
    ASSERT_TRUE(done.get_future().get().ok());
    std::promise<Status> deleted;
    (*store)->Commit({{"job/2", std::nullopt}}, [&](Status s) { deleted.set_value(s); });
    ASSERT_TRUE(deleted.get_future().get().ok());
  }
  auto store = RocksStore::Open(dir);
  ASSERT_TRUE(store.ok());
  auto records = (*store)->LoadAll();
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0], (std::pair<std::string, std::string>{"job/1", "a"}));
  EXPECT_EQ((*records)[1].first, "node/x");
  std::filesystem::remove_all(dir);
}

TEST(RocksStoreTest, ConcurrentCommitsAreGroupedAndAnsweredInOrder) {
  const std::string dir = TempDir();
  auto store = RocksStore::Open(dir);
  ASSERT_TRUE(store.ok());
  constexpr int kThreads = 8, kPerThread = 100;
  std::atomic<int> acknowledged{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::promise<void> done;
        (*store)->Commit({{"k/" + std::to_string(t) + "/" + std::to_string(i), "v"}},
                         [&](Status s) {
                           EXPECT_TRUE(s.ok());
                           ++acknowledged;
                           done.set_value();
                         });
        done.get_future().wait();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(acknowledged.load(), kThreads * kPerThread);
  EXPECT_EQ((*store)->batch_count(), uint64_t{kThreads * kPerThread});
  // Group commit: eight writers each waiting on their own sync overlap, so batches share syncs.
  EXPECT_LT((*store)->sync_count(), (*store)->batch_count());
  std::vector<int> order;
  std::mutex mu;
  for (int i = 0; i < 50; ++i) {
    (*store)->Commit(i % 2 ? StoreBatch{} : StoreBatch{{"o/" + std::to_string(i), "v"}},
                     [&, i](Status) {
                       std::lock_guard<std::mutex> lock(mu);
                       order.push_back(i);
                     });
  }
  (*store)->Close();
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
  auto records = (*store)->LoadAll();
  EXPECT_EQ(records->size(), size_t{kThreads * kPerThread + 25});
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace snn
