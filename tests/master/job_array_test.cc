// Job arrays in the master, in-process (issue 40): an array of a million elements is one small
// record until elements start; elements split off as they start, never more than %K unfinished
// at once whatever their run times; each ends into the array, which ends with the last.
#include <gtest/gtest.h>

#include <random>

#include "common/base/array_spec.h"
#include "tests/master/array_master.h"

namespace snn {
namespace {

using JobArrayTest = ArrayMaster;

TEST_F(JobArrayTest, AMillionElementsAreOneSmallRecordUntilTheyStart) {
  const size_t before = store_.size();
  const v1::JobRecord& array = SubmitArray("0-999999%64");
  EXPECT_EQ(store_.size(), before + 1);
  auto stored = store_.Get(JobKey(array.id()));
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_LT((*stored)->size(), 10'000u);
  EXPECT_EQ(jobs_.jobs().size(), 1u);
  // Its first pass starts as many as the boards hold (32 one-core tasks), each a job.
  components_.scheduling.RunSchedulingPass();
  journal_.Commit();
  EXPECT_EQ(Unfinished(array.id()).size(), 32u);
  EXPECT_EQ(CountOf(jobs_.Find(array.id())->array_left()), 1'000'000u - 32);
}

TEST_F(JobArrayTest, NeverMoreThanKUnfinishedWhateverTheRunTimes) {
  for (uint32_t k : {1u, 3u, 7u, 40u}) {
    SCOPED_TRACE("%" + std::to_string(k));
    const uint64_t id = SubmitArray("0-149:1%" + std::to_string(k)).id();
    std::mt19937 rng(k);
    std::set<uint32_t> seen;
    for (int round = 0; round < 10'000 && !IsTerminal(Get(id).state()); ++round) {
      components_.scheduling.RunSchedulingPass();
      journal_.Commit();
      std::vector<v1::JobRecord*> unfinished = Unfinished(id);
      ASSERT_LE(unfinished.size(), k);
      ASSERT_LE(jobs_.ArrayActive(id), k);
      for (v1::JobRecord* element : unfinished) {
        seen.insert(element->array_task_id());
        EXPECT_EQ(element->spec().task().env().at("SNN_ARRAY_TASK_ID"),
                  std::to_string(element->array_task_id()));
        // Random run times: each running element ends this round with probability 1/3.
        if (element->state() == v1::RUNNING && rng() % 3 == 0) End(*element, 0);
      }
    }
    const v1::JobRecord array = Get(id);
    EXPECT_EQ(array.state(), v1::COMPLETED) << array.reason();
    EXPECT_EQ(seen.size(), 150u);
    EXPECT_EQ(array.array_completed(), 150u);
  }
}

// A user's max_submitted counts an array as its elements, whether they started or not.
TEST_F(JobArrayTest, AnArrayCountsAsItsElementsAgainstMaxSubmitted) {
  v1::SchedulingConfig config = components_.scheduling.scheduling();
  config.mutable_user_limits()->set_max_submitted(10);
  components_.scheduling.SetScheduling(config);
  auto big = TrySubmitArray("0-10");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(),
            "user alice has 0 jobs pending or running, the most 10 allowed (policy "
            "limits.per_user.max_submitted); this array adds 11: submit again when some have "
            "ended");
  ASSERT_TRUE(TrySubmitArray("0-7").ok());
  EXPECT_EQ(jobs_.submitted().OfUser("alice"), 8u);
  components_.scheduling.RunSchedulingPass();  // elements split off: the count stays
  journal_.Commit();
  EXPECT_EQ(jobs_.submitted().OfUser("alice"), 8u);
  ASSERT_TRUE(TrySubmitArray("").ok());  // a ninth job
  EXPECT_FALSE(TrySubmitArray("0-1").ok());
  ASSERT_TRUE(TrySubmitArray("5").ok());  // the tenth
  EXPECT_EQ(jobs_.submitted().OfUser("alice"), 10u);
}

TEST_F(JobArrayTest, SlicesAreCancelledHeldAndReleasedAndTheArrayEndsWithItsLastElement) {
  const uint64_t id = SubmitArray("0-9%2").id();
  components_.scheduling.RunSchedulingPass();  // 0 and 1 start
  journal_.Commit();
  v1::JobRecord& array = *jobs_.Find(id);
  ArrayRanges some;
  v1::ArrayRange* r = some.Add();
  r->set_first(1);
  r->set_last(4);
  r->set_step(1);
  ASSERT_TRUE(components_.lifecycle.CancelElements(array, some, "cancelled by alice").ok());
  EXPECT_EQ(FormatArrayRanges(array.array_left()), "5-9");  // 1 was running: cancelled
  ASSERT_EQ(Unfinished(id).size(), 1u);
  r->set_first(5);
  r->set_last(9);
  ASSERT_TRUE(components_.lifecycle.HoldElements(array, some, false).ok());
  EXPECT_EQ(FormatArrayRanges(array.array_held()), "5-9");
  EXPECT_FALSE(components_.lifecycle.HoldElements(array, some, false).ok());  // none waiting
  End(*Unfinished(id)[0], 3);                                                 // element 0 fails
  components_.scheduling.RunSchedulingPass();
  EXPECT_TRUE(Unfinished(id).empty());  // the rest are held
  EXPECT_EQ(array.state(), v1::PENDING);
  ASSERT_TRUE(components_.lifecycle.HoldElements(array, some, true).ok());
  components_.scheduling.RunSchedulingPass();
  journal_.Commit();
  EXPECT_EQ(Unfinished(id).size(), 2u);
  ASSERT_TRUE(components_.lifecycle.Cancel(array, "cancelled by alice").ok());
  const v1::JobRecord ended = Get(id);
  EXPECT_EQ(ended.state(), v1::FAILED) << ended.reason();  // element 0 failed
  EXPECT_EQ(ended.array_failed(), 1u);
  EXPECT_EQ(ended.array_cancelled(), 9u);
}

}  // namespace
}  // namespace snn
