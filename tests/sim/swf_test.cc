// SWF traces: the replay conventions, malformed lines (stop with the line number, or skip),
// and a small replay whose figures are worked out by hand.
#include "sim/swf.h"

#include <gtest/gtest.h>

#include "sim/replay.h"

namespace snn {
namespace {

// id submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue
// partition preceding think
constexpr char kTrace[] = R"(; MaxProcs: 4
1 0 -1 100 2 -1 -1 2 50 -1 1 7 1 1 1 1 -1 -1
2 10 -1 -1 1 -1 -1 1 100 -1 0 7 1 1 1 1 -1 -1
3 20 -1 30 -1 -1 -1 8 -1 -1 1 8 1 1 1 1 -1 -1
)";

TEST(SwfTest, ConventionsDropFallBackCapAndRaiseEstimates) {
  auto trace = ParseSwf(kTrace, false);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->max_procs, 4u);
  EXPECT_EQ(trace->dropped, 1u);  // job 2: negative run time
  ASSERT_EQ(trace->jobs.size(), 2u);
  EXPECT_EQ(trace->jobs[0].estimate_s, 100);  // asked 50, ran 100: raised
  EXPECT_EQ(trace->jobs[1].procs, 4u);        // requested 8, capped at MaxProcs
  EXPECT_EQ(trace->jobs[1].estimate_s, 30);   // no request: the run time
}

TEST(SwfTest, AMalformedLineStopsWithItsNumberOrIsSkipped) {
  const std::string bad = std::string(kTrace) + "4 30 -1 oops\n";
  auto stopped = ParseSwf(bad, false);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().message(), "line 5: expected 18 integer fields, found 3");
  auto skipped = ParseSwf(bad, true);
  ASSERT_TRUE(skipped.ok());
  EXPECT_EQ(skipped->bad_lines, 1u);
  EXPECT_EQ(skipped->jobs.size(), 2u);
}

TEST(SwfTest, FcfsAndEasyOnATinyTraceGiveTheFiguresWorkedOutByHand) {
  // 4 processors. Job 1: 3 procs, 100 s. Job 2: 4 procs, 10 s, submitted at 1. Job 3: 1 proc,
  // 50 s, submitted at 2. FCFS: 2 waits for 1 (starts 100), 3 behind it (starts 110).
  // EASY: 3 fits beside 1 and ends (52) before 2's reservation (100): it starts at 2.
  auto trace = ParseSwf(R"(; MaxProcs: 4
1 0 -1 100 3 -1 -1 3 100 -1 1 1 1 1 1 1 -1 -1
2 1 -1 10 4 -1 -1 4 10 -1 1 2 1 1 1 1 -1 -1
3 2 -1 50 1 -1 -1 1 50 -1 1 3 1 1 1 1 -1 -1
)",
                        false);
  ASSERT_TRUE(trace.ok());
  ReplayOptions fcfs;
  fcfs.policy = SimPolicy::kFcfs;
  auto f = Replay(*trace, fcfs);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)[1].start_s, 100);
  EXPECT_EQ((*f)[2].start_s, 110);
  ReplayOptions easy;
  easy.policy = SimPolicy::kEasy;
  auto e = Replay(*trace, easy);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)[1].start_s, 100);
  EXPECT_EQ((*e)[2].start_s, 2);
  const ReplayMetrics m = Summarize(*e, 4);
  EXPECT_DOUBLE_EQ(m.mean_wait_s, (0 + 99 + 0) / 3.0);
  EXPECT_DOUBLE_EQ(m.max_wait_s, 99);
  EXPECT_DOUBLE_EQ(m.utilization, (300 + 40 + 50) / (4.0 * 110));
}

}  // namespace
}  // namespace snn
