// SWF traces: the replay conventions, malformed lines (stop with the line number, or skip),
// and a small replay whose figures are worked out by hand.
#include "sim/swf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "sim/fair_start.h"
#include "sim/replay.h"

namespace snn {
namespace {

// A replayed job's outcome, as the fairness figures read it (no forecast, no boards).
JobOutcome Outcome(uint64_t id, int64_t submit_s, int64_t start_s, int64_t run_s, uint32_t procs,
                   int64_t user) {
  JobOutcome o;
  o.id = id;
  o.submit_s = submit_s;
  o.start_s = start_s;
  o.run_s = run_s;
  o.procs = procs;
  o.user = user;
  return o;
}

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
  EXPECT_TRUE(trace->max_procs_in_header);
  EXPECT_EQ(trace->job_lines, 3u);
  EXPECT_EQ(trace->dropped(), 1u);
  EXPECT_EQ(trace->dropped_run_time, 1u);  // job 2: negative run time
  ASSERT_EQ(trace->jobs.size(), 2u);
  EXPECT_EQ(trace->jobs[0].estimate_s, 100);  // asked 50, ran 100: raised
  EXPECT_EQ(trace->jobs[1].procs, 4u);        // requested 8, capped at MaxProcs
  EXPECT_EQ(trace->capped, 1u);
  EXPECT_EQ(trace->jobs[1].estimate_s, 30);  // no request: the run time
}

// Lines as archives publish them: a header with notes and odd spacing, CRLF endings, decimals
// in the average CPU time and used memory (and, now and then, in a field the replay uses).
constexpr char kArchive[] =
    ";   --- converted from the machine's accounting ---\r\n"
    "; Version: 2.2\r\n"
    "; MaxNodes: 128\r\n"
    ";  MaxProcs:   128  \r\n"
    "; Note: the scheduler was EASY; nodes: 128\r\n"
    ";\r\n"
    "    1      0   1955   1267  64   552.21  10240.5   64   1800  -1 1  3 1 -1 1 -1 -1 -1\r\n"
    "    2     20     12  600.7  16  -1       -1        16   3600  -1 1  4 1 -1 1 -1 -1 -1\r\n"
    "    3     31     -1     -1  32  -1       -1        32   3600  -1 5  4 1 -1 1 -1 -1 -1\r\n"
    "    4     40      0     10  -1  -1       -1        -1     -1  -1 0  5 1 -1 1 -1 -1 -1\r\n"
    "    5   55.5      3     90  -1  88.0     -1       256    100  -1 1  5 1 -1 1 -1 -1 -1\r\n"
    "\r\n";

TEST(SwfTest, ArchiveLinesWithDecimalsAreReadAndEachDropHasItsReason) {
  auto trace = ParseSwf(kArchive, false);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->header.at("Version"), "2.2");
  EXPECT_EQ(trace->header.at("MaxNodes"), "128");
  EXPECT_EQ(trace->max_procs, 128u);
  EXPECT_EQ(trace->job_lines, 5u);
  EXPECT_EQ(trace->dropped_run_time, 1u);  // job 3: cancelled before it ran
  EXPECT_EQ(trace->dropped_procs, 1u);     // job 4: no processor count at all
  EXPECT_EQ(trace->decimal_fields, 5u);
  ASSERT_EQ(trace->jobs.size(), 3u);
  EXPECT_EQ(trace->jobs[0].run_s, 1267);
  EXPECT_EQ(trace->jobs[0].procs, 64u);
  EXPECT_EQ(trace->jobs[0].user, 3);
  EXPECT_EQ(trace->jobs[1].run_s, 600);  // 600.7 s: its whole part
  EXPECT_EQ(trace->jobs[1].estimate_s, 3600);
  EXPECT_EQ(trace->jobs[2].submit_s, 55);
  EXPECT_EQ(trace->jobs[2].procs, 128u);  // requested 256, capped
  EXPECT_EQ(trace->jobs[2].estimate_s, 100);
  EXPECT_EQ(trace->capped, 1u);
}

TEST(SwfTest, ABrokenLineStopsWithItsNumberAndReasonOrIsSkippedAndCounted) {
  const std::string good = kArchive;
  struct Case {
    std::string line, error;
  };
  const std::vector<Case> cases = {
      {"6 60 -1 oops 8 -1 -1 8 60 -1 1 5 1 -1 1 -1 -1 -1",
       "line 13: field 4 (run time) is 'oops', not a number"},
      {"6 60 -1 10 8 -1 -1 8 60 -1 1 5 1 -1 1 -1 -1", "line 13: expected 18 fields, found 17"},
      {"6 60 -1 10 8 -1 -1 8 60 -1 1 5 1 -1 1 -1 -1 -1 7", "line 13: more than 18 fields ('7')"},
      {"6 60 -1 10 8 nan -1 8 60 -1 1 5 1 -1 1 -1 -1 -1",
       "line 13: field 6 (avg CPU time) is 'nan', not a number"},
      {"6 60 -1 10 8 1e999 -1 8 60 -1 1 5 1 -1 1 -1 -1 -1",
       "line 13: field 6 (avg CPU time) is '1e999', not a number"},
      {"6 60 -1 10 8 -1 -1 8 60 -1 1 5 1 -1 1 -1 -1 12,5",
       "line 13: field 18 (think time) is '12,5', not a number"},
  };
  for (const Case& c : cases) {
    const std::string text = good + c.line + "\n7 70 -1 10 8 -1 -1 8 60 -1 1 5 1 -1 1 -1 -1 -1\n";
    auto stopped = ParseSwf(text, false);
    ASSERT_FALSE(stopped.ok()) << c.line;
    EXPECT_EQ(stopped.status().message(), c.error);
    auto skipped = ParseSwf(text, true);
    ASSERT_TRUE(skipped.ok()) << c.line;
    EXPECT_EQ(skipped->bad_lines, 1u);
    EXPECT_EQ(skipped->first_bad_line, c.error);
    EXPECT_EQ(skipped->jobs.size(), 4u);  // the three before and job 7 after
    EXPECT_EQ(skipped->job_lines, 7u);
  }
}

TEST(SwfTest, WithoutMaxProcsTheWidestJobSetsTheMachine) {
  auto trace = ParseSwf(
      "1 0 -1 10 3 -1 -1 3 60 -1 1 1 1 -1 1 -1 -1 -1\n"
      "2 5 -1 10 -1 -1 -1 7 60 -1 1 1 1 -1 1 -1 -1 -1\n",
      false);
  ASSERT_TRUE(trace.ok());
  EXPECT_FALSE(trace->max_procs_in_header);
  EXPECT_EQ(trace->max_procs, 7u);
  EXPECT_EQ(trace->capped, 0u);
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

TEST(SwfTest, UtilizationWhileJobsArriveCountsOnlyTheWorkDoneFromTheFirstSubmitToTheLast) {
  // 2 processors. Job 1 (submitted at 0) runs 0..100 on 2; job 2 (at 50) 100..400 on 1; job 3
  // (at 140) 150..160 on 1; job 4, the last submitted (at 200), 300..350 on 1. From 0 to 200:
  // 200 + 100 + 10 = 310 of 400 processor-seconds. Over the whole span (0..400): 560 of 800.
  const std::vector<JobOutcome> jobs = {Outcome(1, 0, 0, 100, 2, 1), Outcome(2, 50, 100, 300, 1, 1),
                                        Outcome(3, 140, 150, 10, 1, 2),
                                        Outcome(4, 200, 300, 50, 1, 2)};
  const ReplayMetrics m = Summarize(jobs, 2);
  EXPECT_EQ(m.last_submit_s, 200);
  EXPECT_DOUBLE_EQ(m.arrival_utilization, 310.0 / 400);
  EXPECT_DOUBLE_EQ(m.utilization, 560.0 / 800);
  // Daily 2 h windows from 1 h: arrivals over 26 h see the first window and half the second.
  const std::vector<SimReservation> windows = {SimReservation{3600, 7200, 86400, {}}};
  EXPECT_DOUBLE_EQ(ReservedShare(windows, 0, 26 * 3600, 1), 3.0 / 26);
}

TEST(SwfTest, WithAnAccrualLimitAUsersFloodNoLongerHoldsBackAnotherUsersJob) {
  // 1 processor. User 1's job 1 runs 6 h; at 1 s user 1 queues four 1 h jobs, at 2 s user 2
  // one. When job 1 ends every job has waited past the 5 h starvation guard: oldest first, so
  // user 2's job runs last. With one accruing job per user, user 1's later jobs have waited
  // nothing that counts, and user 2's job runs second.
  auto trace = ParseSwf(R"(; MaxProcs: 1
1 0 -1 21600 1 -1 -1 1 21600 -1 1 1 1 1 1 1 -1 -1
2 1 -1 3600 1 -1 -1 1 3600 -1 1 1 1 1 1 1 -1 -1
3 1 -1 3600 1 -1 -1 1 3600 -1 1 1 1 1 1 1 -1 -1
4 1 -1 3600 1 -1 -1 1 3600 -1 1 1 1 1 1 1 -1 -1
5 1 -1 3600 1 -1 -1 1 3600 -1 1 1 1 1 1 1 -1 -1
6 2 -1 3600 1 -1 -1 1 3600 -1 1 2 1 1 1 1 -1 -1
)",
                        false);
  ASSERT_TRUE(trace.ok());
  ReplayOptions plain;
  auto p = Replay(*trace, plain);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)[5].start_s, 21600 + 4 * 3600);
  ReplayOptions limited;
  limited.accrue_per_user = 1;
  auto l = Replay(*trace, limited);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ((*l)[1].start_s, 21600);
  EXPECT_EQ((*l)[5].start_s, 21600 + 3600);
  EXPECT_EQ((*l)[4].start_s, 21600 + 4 * 3600);
}

TEST(SwfTest, TheBackfillOrderDecidesWhichJobTakesAHole) {
  // 3 processors. Job 1 holds 2 for 100 s; job 2 needs all 3 and holds the reservation at 100.
  // Jobs 3 (90 s) and 4 (40 s) come together for the one free processor: in queue order job 3
  // takes it, shortest first job 4 (the master's default).
  auto trace = ParseSwf(R"(; MaxProcs: 3
1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 1 1 1 -1 -1
2 1 -1 10 3 -1 -1 3 10 -1 1 2 1 1 1 1 -1 -1
3 2 -1 90 1 -1 -1 1 90 -1 1 3 1 1 1 1 -1 -1
4 2 -1 40 1 -1 -1 1 40 -1 1 4 1 1 1 1 -1 -1
)",
                        false);
  ASSERT_TRUE(trace.ok());
  ReplayOptions shortest;
  auto s = Replay(*trace, shortest);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[3].start_s, 2);
  EXPECT_GT((*s)[2].start_s, 2);
  ReplayOptions queue;
  queue.backfill_shortest_first = false;
  auto q = Replay(*trace, queue);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ((*q)[2].start_s, 2);
  EXPECT_GT((*q)[3].start_s, 2);
}

TEST(SwfTest, FairnessIsJainsIndexOverTheUsersRatesOfServiceAndTheSpreadOfTheirNormalizedWait) {
  // Users 1 and 2: bounded slowdown 1; user 3: (30 + 10) / 10 = 4.
  const std::vector<JobOutcome> jobs = {Outcome(1, 0, 0, 100, 1, 1), Outcome(2, 0, 0, 100, 1, 2),
                                        Outcome(3, 0, 30, 10, 1, 3)};
  const ReplayMetrics m = Summarize(jobs, 4);
  // NUWT: 0, 0 and 30 s of wait over 10 processor-seconds = 3: mean 1, sd sqrt((1+1+4)/3).
  EXPECT_DOUBLE_EQ(m.nuwt_sd, std::sqrt(2.0));
  EXPECT_EQ(m.p50_wait_s, 0);
  EXPECT_EQ(m.p99_wait_s, 30);
  EXPECT_EQ(m.max_wait_s, 30);
  // (1 + 1 + 1/4)^2 / (3 (1 + 1 + 1/16))
  EXPECT_DOUBLE_EQ(m.service_fairness, 2.25 * 2.25 / (3 * 2.0625));
  EXPECT_DOUBLE_EQ(m.worst_user_slowdown, 4);
  EXPECT_EQ(m.worst_user, 3);
}

// An overloaded machine, made up but the same every run: 600 jobs of 1 to 16 processors from 6
// users, arriving faster than 16 processors serve them, so that hundreds wait at once, with run
// times at or under their estimates and some far under.
Trace OverloadedTrace() {
  std::string text = "; MaxProcs: 16\n";
  uint64_t state = 12345;
  auto next = [&state](uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % n;
  };
  int64_t submit = 0;
  for (int id = 1; id <= 600; ++id) {
    submit += static_cast<int64_t>(next(40));
    const uint64_t procs = next(4) == 0 ? 1 + next(16) : 1 + next(3);
    const uint64_t estimate = 60 * (1 + next(120));
    const uint64_t run = next(5) == 0 ? next(30) : estimate / (1 + next(4));
    text += std::to_string(id) + " " + std::to_string(submit) + " -1 " + std::to_string(run) + " " +
            std::to_string(procs) + " -1 -1 " + std::to_string(procs) + " " +
            std::to_string(estimate) + " -1 1 " + std::to_string(1 + next(6)) + " 1 1 1 1 -1 -1\n";
  }
  auto trace = ParseSwf(text, false);
  EXPECT_TRUE(trace.ok());
  return *trace;
}

TEST(ReplayTest, GivingEachPassOnlyTheJobsThatCanStartChangesNoDecision) {
  // The fast path leaves out of each pass the jobs that cannot start in it; the reference gives
  // the pass every pending job, with words, as the master's full pass. Every job must start at
  // the same second either way, under each policy, on counted one-core boards and on a mesh.
  const Trace trace = OverloadedTrace();
  for (SimPolicy policy : {SimPolicy::kFcfs, SimPolicy::kEasy, SimPolicy::kDefault}) {
    for (uint32_t mesh : {0u, 4u}) {
      ReplayOptions fast;
      fast.policy = policy;
      fast.mesh_width = fast.mesh_height = mesh;
      if (policy == SimPolicy::kDefault) {
        fast.weights = DefaultWeights();
        fast.weights.starve_after_ms = 3600 * 1000;  // reached here: starving jobs in the order
      }
      ReplayOptions whole = fast;
      whole.whole_queue_each_pass = true;
      auto a = Replay(trace, fast);
      auto b = Replay(trace, whole);
      ASSERT_TRUE(a.ok() && b.ok());
      ASSERT_EQ(a->size(), b->size());
      size_t waited = 0;
      for (size_t i = 0; i < a->size(); ++i) {
        EXPECT_EQ((*a)[i].start_s, (*b)[i].start_s)
            << "job " << (*a)[i].id << ", policy " << static_cast<int>(policy) << ", mesh " << mesh;
        if ((*a)[i].start_s - (*a)[i].submit_s > 3600) ++waited;
      }
      EXPECT_GT(waited, 100u) << "the trace must keep a deep queue";
    }
  }
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

TEST(SwfTest, ShakingMovesATenthOfTheJobsByAtMostFiveMinutesTheSameWayForTheSameSeed) {
  Trace trace;
  for (uint64_t i = 0; i < 10000; ++i) {
    trace.jobs.push_back(TraceJob{i + 1, int64_t(i) * 1000, 10, 10, 1, 1});
  }
  Trace a = trace, b = trace, c = trace;
  ShakeTrace(a, 7);
  ShakeTrace(b, 7);
  ShakeTrace(c, 8);
  size_t moved = 0;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].id, b.jobs[i].id);
    EXPECT_EQ(a.jobs[i].submit_s, b.jobs[i].submit_s);
    if (i > 0) {
      EXPECT_LE(a.jobs[i - 1].submit_s, a.jobs[i].submit_s);  // sorted again
    }
    const int64_t was = int64_t(a.jobs[i].id - 1) * 1000;
    EXPECT_LE(std::abs(a.jobs[i].submit_s - was), 300);
    moved += a.jobs[i].submit_s != was;
  }
  EXPECT_GT(moved, 850u);  // about 1,000 chosen; a few moved by 0
  EXPECT_LT(moved, 1150u);
  bool differs = false;
  for (size_t i = 0; i < a.jobs.size(); ++i) differs |= a.jobs[i].submit_s != c.jobs[i].submit_s;
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

// Two processors; A holds both until 100. B (both, 100 s) comes at 1, C (one, 10 s) at 2.
// Served in order of arrival, B starts at 100 and C at 200: nobody is late. A policy that lets
// C go first (at 100, pushing B to 110) makes B late; C itself gained, and is not.
TEST(FairStartTest, AJobIsLateWhenOneThatCameAfterItPushedItBack) {
  std::vector<JobOutcome> in_order = {Outcome(1, 0, 0, 100, 2, 1), Outcome(2, 1, 100, 100, 2, 2),
                                      Outcome(3, 2, 200, 10, 1, 3)};
  EXPECT_EQ(FairStarts(in_order, 2).late, 0u);
  EXPECT_EQ(FairStarts(in_order, 2).waited, 2u);
  std::vector<JobOutcome> overtaken = {Outcome(1, 0, 0, 100, 2, 1), Outcome(2, 1, 110, 100, 2, 2),
                                       Outcome(3, 2, 100, 10, 1, 3)};
  const FairStartFigures f = FairStarts(overtaken, 2);
  EXPECT_EQ(f.late, 1u);
  EXPECT_DOUBLE_EQ(f.late_share, 1.0 / 3);
  EXPECT_DOUBLE_EQ(Summarize(overtaken, 2).late_share, 1.0 / 3);
}

}  // namespace
}  // namespace snn

namespace snn {
namespace {

TEST(ReplayTest, ForecastsChangeNoDecisionAndAreExactWhereJobsRunToTheirLimitsInOrder) {
  const Trace trace = OverloadedTrace();
  for (SimPolicy policy : {SimPolicy::kFcfs, SimPolicy::kEasy, SimPolicy::kDefault}) {
    ReplayOptions plain;
    plain.policy = policy;
    if (policy == SimPolicy::kDefault) plain.weights = DefaultWeights();
    ReplayOptions forecast = plain;
    forecast.forecast_every = 1;
    auto a = Replay(trace, plain);
    auto b = Replay(trace, forecast);
    ASSERT_TRUE(a.ok() && b.ok());
    size_t forecast_jobs = 0;
    for (size_t i = 0; i < a->size(); ++i) {
      EXPECT_EQ((*a)[i].start_s, (*b)[i].start_s) << "job " << (*a)[i].id;
      if ((*b)[i].forecast_s >= 0) ++forecast_jobs;
    }
    EXPECT_GT(forecast_jobs, 100u);
    const ReplayMetrics m = Summarize(*b, trace.max_procs);
    EXPECT_GT(m.forecasts, 100u);
    EXPECT_LT(m.forecast_error, m.reservation_only_error) << static_cast<int>(policy);
  }
  // Every job running exactly to its limit, first come first served: nothing submitted later
  // can change a start, and each user's history predicts the limit exactly.
  Trace exact = OverloadedTrace();
  for (TraceJob& j : exact.jobs) j.run_s = j.estimate_s = 60 * (1 + j.user % 3);
  ReplayOptions fcfs;
  fcfs.policy = SimPolicy::kFcfs;
  fcfs.forecast_every = 1;
  auto c = Replay(exact, fcfs);
  ASSERT_TRUE(c.ok());
  size_t forecast_jobs = 0;
  for (const JobOutcome& j : *c) {
    if (j.forecast_s < 0) continue;
    ++forecast_jobs;
    EXPECT_EQ(j.forecast_s, j.start_s) << "job " << j.id;
  }
  EXPECT_GT(forecast_jobs, 100u);
}

}  // namespace
}  // namespace snn
