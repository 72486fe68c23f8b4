// The HA leader's pipeline of etcd writes: several at once, handed on strictly in order, a
// failure failing everything after it, a batch of several chunks written alone.
#include "master/ha/replication_pipeline.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace snn {
namespace {

using Chunks = ReplicationPipeline::Chunks;

// Writes that end when the test says, and what the pipeline handed on.
class Etcd {
 public:
  bool Write(uint64_t seq, const Chunks&) {
    std::unique_lock lock(mu_);
    writing_.insert(seq);
    max_writing_ = std::max(max_writing_, writing_.size());
    if (writing_.size() > 1 && alone_.count(seq)) shared_alone_ = true;
    for (uint64_t other : writing_) {
      if (other != seq && alone_.count(other)) shared_alone_ = true;
    }
    changed_.notify_all();
    changed_.wait(lock, [&] { return outcome_.count(seq) > 0; });
    writing_.erase(seq);
    return outcome_[seq];
  }
  void Written(uint64_t seq, StoreBatch, std::function<void(Status)> finish) {
    {
      std::lock_guard lock(mu_);
      handed_on_.push_back(seq);
    }
    finish(Status::Ok());
  }
  void End(uint64_t seq, bool ok) {
    std::lock_guard lock(mu_);
    outcome_[seq] = ok;
    changed_.notify_all();
  }
  // Waits until `seq` is being written (bounded: a test that would hang fails instead).
  bool Started(uint64_t seq) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(30), [&] { return writing_.count(seq); });
  }
  void MarkAlone(uint64_t seq) {
    std::lock_guard lock(mu_);
    alone_.insert(seq);
  }
  std::vector<uint64_t> handed_on() {
    std::lock_guard lock(mu_);
    return handed_on_;
  }
  size_t writing() {
    std::lock_guard lock(mu_);
    return writing_.size();
  }
  size_t max_writing() {
    std::lock_guard lock(mu_);
    return max_writing_;
  }
  bool shared_alone() {
    std::lock_guard lock(mu_);
    return shared_alone_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::set<uint64_t> writing_;
  std::set<uint64_t> alone_;
  std::map<uint64_t, bool> outcome_;
  std::vector<uint64_t> handed_on_;
  size_t max_writing_ = 0;
  bool shared_alone_ = false;
};

std::unique_ptr<ReplicationPipeline> Pipeline(Etcd& etcd, size_t depth) {
  return std::make_unique<ReplicationPipeline>(
      depth, [&](uint64_t seq, const Chunks& chunks) { return etcd.Write(seq, chunks); },
      [&](uint64_t seq, StoreBatch batch, std::function<void(Status)> finish) {
        etcd.Written(seq, std::move(batch), std::move(finish));
      },
      Unavailable("lost"));
}

Chunks OneChunk(uint64_t seq) { return {{"log/" + std::to_string(seq), "x"}}; }

std::future<Status> Submit(ReplicationPipeline& pipeline, uint64_t seq, Chunks chunks) {
  auto done = std::make_shared<std::promise<Status>>();
  auto answer = done->get_future();
  pipeline.Submit(seq, {StoreWrite{"k" + std::to_string(seq), "v"}}, std::move(chunks),
                  [done](Status s) { done->set_value(std::move(s)); });
  return answer;
}

// Submits batches 1 to n from a thread of their own (Submit waits for a free write).
struct Submitter {
  Submitter(ReplicationPipeline& pipeline, int n) {
    thread = std::thread([&, n] {
      for (int seq = 1; seq <= n; ++seq) answers.push_back(Submit(pipeline, seq, OneChunk(seq)));
    });
  }
  ~Submitter() {
    if (thread.joinable()) thread.join();
  }
  std::future<Status>& operator[](int seq) {
    if (thread.joinable()) thread.join();
    return answers.at(seq - 1);
  }
  std::vector<std::future<Status>> answers;
  std::thread thread;
};

TEST(ReplicationPipelineTest, BatchesWrittenOutOfOrderAreHandedOnInOrder) {
  Etcd etcd;
  auto pipeline = Pipeline(etcd, 3);
  Submitter batches(*pipeline, 3);
  ASSERT_TRUE(etcd.Started(1) && etcd.Started(2) && etcd.Started(3));  // all three at once
  etcd.End(3, true);
  etcd.End(2, true);
  // 2 and 3 are in etcd, but 1 is not yet: nothing is acknowledged.
  EXPECT_TRUE(etcd.handed_on().empty());
  etcd.End(1, true);
  EXPECT_TRUE(batches[1].get().ok());
  EXPECT_TRUE(batches[2].get().ok());
  EXPECT_TRUE(batches[3].get().ok());
  EXPECT_EQ(etcd.handed_on(), (std::vector<uint64_t>{1, 2, 3}));
}

TEST(ReplicationPipelineTest, AFailedBatchFailsEveryLaterOneEvenThoseWritten) {
  Etcd etcd;
  auto pipeline = Pipeline(etcd, 3);
  Submitter batches(*pipeline, 3);
  ASSERT_TRUE(etcd.Started(1) && etcd.Started(2) && etcd.Started(3));
  etcd.End(1, true);
  etcd.End(3, true);
  etcd.End(2, false);
  EXPECT_TRUE(batches[1].get().ok());
  EXPECT_EQ(batches[2].get().code(), Code::kUnavailable);
  EXPECT_EQ(batches[3].get().code(), Code::kUnavailable) << "acknowledged past a gap";
  EXPECT_EQ(etcd.handed_on(), (std::vector<uint64_t>{1}));
  EXPECT_TRUE(pipeline->failed());
  EXPECT_EQ(Submit(*pipeline, 4, OneChunk(4)).get().code(), Code::kUnavailable);
}

TEST(ReplicationPipelineTest, NoMoreThanDepthWritesAtOnceAndAnEmptyBatchWaitsItsTurn) {
  Etcd etcd;
  auto pipeline = Pipeline(etcd, 2);
  std::future<Status> one, two, barrier, three;
  std::thread submitter([&] {
    one = Submit(*pipeline, 1, OneChunk(1));
    two = Submit(*pipeline, 2, OneChunk(2));  // returns once 1 or 2 is written
    barrier = Submit(*pipeline, 0, {});       // an empty batch: after 1 and 2
    three = Submit(*pipeline, 3, OneChunk(3));
  });
  ASSERT_TRUE(etcd.Started(1) && etcd.Started(2));
  EXPECT_EQ(etcd.writing(), 2u);
  etcd.End(2, true);
  ASSERT_TRUE(etcd.Started(3));
  etcd.End(3, true);
  etcd.End(1, true);
  submitter.join();
  EXPECT_TRUE(barrier.get().ok());
  EXPECT_TRUE(three.get().ok());
  EXPECT_EQ(etcd.handed_on(), (std::vector<uint64_t>{1, 2, 0, 3}));
  EXPECT_EQ(etcd.max_writing(), 2u);
}

TEST(ReplicationPipelineTest, ABatchOfSeveralChunksIsWrittenAlone) {
  Etcd etcd;
  auto pipeline = Pipeline(etcd, 4);
  etcd.MarkAlone(2);
  auto one = Submit(*pipeline, 1, OneChunk(1));
  std::future<Status> two, three;
  std::thread submitter([&] {
    two = Submit(*pipeline, 2, {{"log/2/0", "a"}, {"log/2/1", "b"}});
    three = Submit(*pipeline, 3, OneChunk(3));
  });
  ASSERT_TRUE(etcd.Started(1));
  etcd.End(1, true);
  ASSERT_TRUE(etcd.Started(2));
  etcd.End(2, true);
  ASSERT_TRUE(etcd.Started(3));
  etcd.End(3, true);
  submitter.join();
  EXPECT_TRUE(two.get().ok() && three.get().ok());
  EXPECT_FALSE(etcd.shared_alone()) << "a batch of several chunks shared etcd with another";
  EXPECT_EQ(etcd.handed_on(), (std::vector<uint64_t>{1, 2, 3}));
}

TEST(ReplicationPipelineTest, CloseFailsWhatWaitsAndLetsWritesInFlightEnd) {
  Etcd etcd;
  auto pipeline = Pipeline(etcd, 1);
  Submitter batches(*pipeline, 1);
  ASSERT_TRUE(etcd.Started(1));
  std::thread closer([&] { pipeline->Close(); });
  etcd.End(1, true);
  closer.join();
  EXPECT_TRUE(batches[1].get().ok());
  EXPECT_EQ(Submit(*pipeline, 2, OneChunk(2)).get().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace snn
