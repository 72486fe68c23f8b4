// after_corr between arrays, in-process (issue 40): element N of an array starts only once
// element N of the array it names has COMPLETED; one that ends otherwise (failed, cancelled
// running or before it started, or never started as its array ended) cancels its
// correspondent with the reason, and so on down a chain of arrays.
#include <gtest/gtest.h>

#include <random>

#include "master/jobs/job_arrays.h"
#include "tests/master/array_master.h"

namespace snn {
namespace {

class JobArrayCorrTest : public ArrayMaster {
 protected:
  // An array of `indices` whose elements wait for those of the array `awaited` (tenant job ID).
  Result<const v1::JobRecord*> TrySubmitCorr(const std::string& indices, uint64_t awaited) {
    v1::JobSpec spec = SweepSpec(indices);
    spec.add_after_corr(awaited);
    return TrySubmit(spec);
  }
  uint64_t SubmitCorr(const std::string& indices, uint64_t awaited) {
    auto job = TrySubmitCorr(indices, awaited);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? (*job)->id() : 0;
  }
  void Pass() {
    components_.scheduling.RunSchedulingPass();
    journal_.Commit();
  }
  // The element of `array` (global id) with index `index`, if it ever started.
  std::optional<v1::JobRecord> ElementOf(uint64_t array, uint32_t index) {
    const v1::JobRecord a = Get(array);
    const uint64_t tid = ElementTenantJobId(a, index);
    if (const v1::JobRecord* live = jobs_.FindByTenant(a.tenant(), tid)) return *live;
    auto stored = archive_.FindByTenant(a.tenant(), tid);
    EXPECT_TRUE(stored.ok());
    if (!stored.ok() || !*stored) return std::nullopt;
    return **stored;
  }
  // The unfinished element of `array` with index `index`.
  v1::JobRecord& Running(uint64_t array, uint32_t index) {
    for (v1::JobRecord* e : Unfinished(array)) {
      if (e->array_task_id() == index) return *e;
    }
    ADD_FAILURE() << "element " << index << " of " << array << " is not running";
    static v1::JobRecord none;
    return none;
  }
  std::set<uint32_t> RunningIndices(uint64_t array) {
    std::set<uint32_t> out;
    for (v1::JobRecord* e : Unfinished(array)) out.insert(e->array_task_id());
    return out;
  }
  static ArrayRanges Span(uint32_t first, uint32_t last) {
    ArrayRanges r;
    v1::ArrayRange* range = r.Add();
    range->set_first(first);
    range->set_last(last);
    range->set_step(1);
    return r;
  }
};

TEST_F(JobArrayCorrTest, EachElementWaitsForItsOwnAndGoesWithIt) {
  const uint64_t a = SubmitArray("0-9%2").id();  // tenant job 1
  const uint64_t d = SubmitCorr("0-9", 1);
  Pass();
  EXPECT_EQ(RunningIndices(a), (std::set<uint32_t>{0, 1}));
  EXPECT_TRUE(RunningIndices(d).empty());
  EXPECT_EQ(components_.scheduling.PendingReason(*jobs_.Find(d)),
            "waiting for element 1_0 to complete (after_corr)");

  End(Running(a, 0), 0);  // completes: its correspondent starts, alone
  Pass();
  EXPECT_EQ(RunningIndices(d), (std::set<uint32_t>{0}));
  End(Running(a, 1), 3);  // fails: its correspondent is cancelled, with the reason
  EXPECT_EQ(FormatArrayRanges(jobs_.Find(d)->array_left()), "2-9");
  EXPECT_EQ(jobs_.Find(d)->array_cancelled(), 1u);
  EXPECT_EQ(jobs_.Find(d)->reason(),
            "1 element cancelled: element 1_1 it depends on (after_corr) ended FAILED");

  Pass();  // a's 2 and 3 start
  ASSERT_TRUE(
      components_.lifecycle.CancelElements(*jobs_.Find(a), Span(5, 9), "cancelled by alice").ok());
  EXPECT_EQ(FormatArrayRanges(jobs_.Find(d)->array_left()), "2-4");  // never started: gone too
  End(Running(a, 2), 0);
  End(Running(a, 3), 0);
  Pass();  // a's 4 starts; d's 2 and 3
  EXPECT_EQ(RunningIndices(a), (std::set<uint32_t>{4}));
  EXPECT_EQ(RunningIndices(d), (std::set<uint32_t>{0, 2, 3}));
  ASSERT_TRUE(components_.lifecycle.Cancel(*jobs_.Find(a), "cancelled by alice").ok());
  EXPECT_EQ(jobs_.Find(d)->array_left_size(), 0);  // 4 went with it
  // Told by the element itself, though its end also ended its array.
  EXPECT_EQ(jobs_.Find(d)->array_note(),
            "1 element cancelled: element 1_4 it depends on (after_corr) ended CANCELLED");
  for (uint32_t i : {0u, 2u, 3u}) End(Running(d, i), 0);
  const v1::JobRecord ended = Get(d);
  EXPECT_EQ(ended.state(), v1::CANCELLED) << ended.reason();
  EXPECT_EQ(ended.array_completed(), 3u);
  EXPECT_EQ(ended.array_cancelled(), 7u);
}

TEST_F(JobArrayCorrTest, WhatCannotBeWaitedForIsRefusedAtSubmit) {
  auto plain = TrySubmitCorr("", 1);
  EXPECT_EQ(plain.status().message(),
            "after_corr: only an array waits element by element (add array:, or use after_ok)");
  ASSERT_TRUE(TrySubmitArray("").ok());  // tenant job 1: not an array
  EXPECT_EQ(TrySubmitCorr("0-3", 1).status().message(),
            "after_corr: job 1 is not an array; use after_ok");
  EXPECT_EQ(TrySubmitCorr("0-3", 9).status().message(),
            "after_corr: tenant " + Get(1).tenant() + " has no job 9");
  const uint64_t a = SubmitArray("0-9:2").id();  // tenant job 2
  EXPECT_EQ(TrySubmitCorr("0-4", 2).status().message(),
            "after_corr: job 2 has no element 1 (its indices: 0-8:2); element N of this array "
            "waits for its element N");
  Pass();
  End(Running(a, 4), 1);
  EXPECT_EQ(TrySubmitCorr("0-8:4", 2).status().message(),
            "after_corr: element 2_4 ended FAILED, so element 4 of this array could never start; "
            "leave it out of the array");
  v1::JobSpec twice = SweepSpec("0-2");
  twice.add_after_corr(2);
  twice.add_after_ok(2);
  EXPECT_EQ(TrySubmit(twice).status().message(),
            "depends: job 2 is named twice (after_ok, after_corr); name it once");
  // What already completed is settled at submit: it starts at once.
  End(Running(a, 0), 0);
  const uint64_t d = SubmitCorr("0-2:2", 2);
  Pass();
  EXPECT_EQ(RunningIndices(d), (std::set<uint32_t>{0}));
}

// Random run times and outcomes, slices cancelled before they start, and a chain of three
// arrays: an element starts only after its correspondent completed, and every one whose
// correspondent did not is cancelled, so all three end.
TEST_F(JobArrayCorrTest, AChainOfArraysKeepsEveryCorrespondenceWhateverHappens) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    const uint64_t a = SubmitArray("0-199%7").id();
    const uint64_t d = SubmitCorr("0-199:2%5", Get(a).tenant_job_id());
    const uint64_t e = SubmitCorr("0-196:4", Get(d).tenant_job_id());
    const std::pair<uint64_t, uint64_t> links[] = {{d, a}, {e, d}};
    int round = 0;
    auto all_ended = [&] {
      return IsTerminal(Get(a).state()) && IsTerminal(Get(d).state()) && IsTerminal(Get(e).state());
    };
    for (; round < 20'000 && !all_ended(); ++round) {
      Pass();
      for (const auto& [waiting, awaited] : links) {
        for (v1::JobRecord* element : Unfinished(waiting)) {
          auto other = ElementOf(awaited, element->array_task_id());
          ASSERT_TRUE(other.has_value());
          ASSERT_EQ(other->state(), v1::COMPLETED) << element->array_task_id();
        }
      }
      for (uint64_t array : {a, d, e}) {
        for (v1::JobRecord* element : Unfinished(array)) {
          if (element->state() == v1::RUNNING && rng() % 3 == 0) {
            End(*element, rng() % 5 == 0 ? 1 : 0);
          }
        }
      }
      v1::JobRecord* pending_a = jobs_.Find(a);
      if (rng() % 50 == 0 && pending_a != nullptr && pending_a->array_left_size() > 0) {
        const v1::ArrayRange& left = pending_a->array_left(0);
        const uint32_t first = left.first() + rng() % (left.last() - left.first() + 1);
        (void)components_.lifecycle.CancelElements(*pending_a, Span(first, first + 2), "test");
        journal_.Commit();
      }
    }
    ASSERT_LT(round, 20'000);
    for (const auto& [waiting, awaited] : links) {
      const v1::JobRecord w = Get(waiting);
      ASSERT_TRUE(IsTerminal(w.state())) << w.reason();
      uint32_t started = 0;
      for (const auto& r : w.spec().array().ranges()) {
        for (uint32_t i = r.first(); i <= r.last(); i += r.step()) {
          auto mine = ElementOf(waiting, i);
          auto theirs = ElementOf(awaited, i);
          const bool completed = theirs && theirs->state() == v1::COMPLETED;
          EXPECT_EQ(mine.has_value(), completed) << i;
          started += mine.has_value();
        }
      }
      EXPECT_EQ(w.array_completed() + w.array_failed(), started);
      EXPECT_EQ(w.array_completed() + w.array_failed() + w.array_cancelled(),
                CountOf(w.spec().array().ranges()));
    }
  }
}

}  // namespace
}  // namespace snn
