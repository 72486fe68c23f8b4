// Advance reservations in the simulator (issue 40): over random traces and random maintenance
// windows (once or repeating, on random boards of a mesh or on all one-core boards), no job
// ever runs, up to its time limit, into a
// window on a board it used; every job still runs; and giving each pass only the jobs that can
// start changes no decision (the replayer's pruning holds with windows).
#include <gtest/gtest.h>

#include <random>

#include "master/sched/board_closure.h"
#include "sim/replay.h"

namespace snn {
namespace {

constexpr uint32_t kSide = 4;    // 4x4 boards
constexpr uint32_t kBoards = 6;  // MaxProcs 96

Trace RandomTrace(std::mt19937_64& random) {
  Trace trace;
  trace.max_procs = kBoards * kSide * kSide;
  trace.max_procs_in_header = true;
  std::uniform_int_distribution<int64_t> gap(0, 300), estimate(60, 2 * 3600);
  std::uniform_int_distribution<uint32_t> procs(1, kSide * kSide), user(1, 6);
  int64_t submit = 0;
  for (uint64_t id = 1; id <= 400; ++id) {
    submit += gap(random);
    const int64_t limit = estimate(random);
    const int64_t run = std::uniform_int_distribution<int64_t>(0, limit)(random);
    trace.jobs.push_back(TraceJob{id, submit, run, limit, procs(random), user(random)});
  }
  return trace;
}

std::vector<SimReservation> RandomWindows(std::mt19937_64& random) {
  std::vector<SimReservation> windows;
  const int count = std::uniform_int_distribution<int>(1, 3)(random);
  for (int k = 0; k < count; ++k) {
    SimReservation r;
    r.start_s = std::uniform_int_distribution<int64_t>(0, 20'000)(random);
    r.duration_s = std::uniform_int_distribution<int64_t>(600, 3 * 3600)(random);
    // Once, or every 6 h (leaving at least 3 h open: every job's limit fits between).
    r.period_s = random() % 2 == 0 ? 0 : 6 * 3600;
    for (uint32_t b = 0; b < kBoards; ++b) {
      if (random() % 2 == 0) r.boards.push_back(b);
    }
    windows.push_back(std::move(r));
  }
  return windows;
}

// With a mesh, windows on random boards; without one (one-core boards, counted), windows close
// every board, and a job's run meets none at all.
TEST(ReservationReplayTest, NoJobEverRunsIntoAWindowOnABoardItUsed) {
  size_t checked = 0, near = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    std::mt19937_64 random(seed);
    const Trace trace = RandomTrace(random);
    std::vector<SimReservation> windows = RandomWindows(random);
    const bool mesh = seed <= 12;
    if (!mesh) {  // one window on every board (two might leave no room between them)
      windows.resize(1);
      windows[0].boards.clear();
    }
    for (SimPolicy policy : {SimPolicy::kFcfs, SimPolicy::kEasy, SimPolicy::kDefault}) {
      ReplayOptions options;
      options.policy = policy;
      if (policy == SimPolicy::kDefault) options.weights = DefaultWeights();
      if (mesh) options.mesh_width = options.mesh_height = kSide;
      options.reservations = windows;
      auto fast = Replay(trace, options);
      ASSERT_TRUE(fast.ok()) << fast.status().ToString();
      options.whole_queue_each_pass = true;
      auto whole = Replay(trace, options);
      ASSERT_TRUE(whole.ok());
      for (size_t i = 0; i < fast->size(); ++i) {
        const JobOutcome& j = (*fast)[i];
        ASSERT_GE(j.start_s, j.submit_s) << "job " << j.id << " never ran, seed " << seed;
        EXPECT_EQ(j.start_s, (*whole)[i].start_s) << "job " << j.id << ", seed " << seed;
        const int64_t limit = trace.jobs[i].estimate_s;
        for (const SimReservation& r : windows) {
          const BoardClosure c{"", r.start_s, r.start_s + r.duration_s, r.period_s};
          if (!mesh) {
            ASSERT_FALSE(c.Meets(j.start_s, j.start_s + limit))
                << "job " << j.id << " from " << j.start_s << " for " << limit
                << " s meets the window from " << r.start_s << ", seed " << seed;
            int64_t s = 0, e = 0;
            if (c.OccurrenceAfter(j.start_s, &s, &e) && s - (j.start_s + limit) < 600) ++near;
            continue;
          }
          for (uint32_t b : j.boards) {
            if (!r.boards.empty() &&
                std::find(r.boards.begin(), r.boards.end(), b) == r.boards.end())
              continue;
            ASSERT_FALSE(c.Meets(j.start_s, j.start_s + limit))
                << "job " << j.id << " on board " << b << " from " << j.start_s << " for " << limit
                << " s meets the window from " << r.start_s << ", seed " << seed;
            // How many ended within 10 minutes of a window (the rule is tested, not idle).
            int64_t s = 0, e = 0;
            if (c.OccurrenceAfter(j.start_s, &s, &e) && s - (j.start_s + limit) < 600) ++near;
          }
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 24u * 3 * 400);
  EXPECT_GT(near, 100u) << "jobs must come close to the windows for the test to mean anything";
}

TEST(ReservationReplayTest, AJobSubmittedDuringAWindowStartsWhenItCloses) {
  Trace trace;
  trace.max_procs = kSide * kSide;
  trace.jobs.push_back(TraceJob{1, 100, 50, 60, 4, 1});
  trace.jobs.push_back(TraceJob{2, 5000, 50, 60, 4, 1});  // in the second window
  ReplayOptions options;
  options.mesh_width = options.mesh_height = kSide;
  options.reservations = {SimReservation{50, 200, 4000, {}}};  // 50-250, 4050-4250, ...
  auto replay = Replay(trace, options);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ((*replay)[0].start_s, 250);
  EXPECT_EQ((*replay)[1].start_s, 5000);
  trace.jobs[1].submit_s = 4100;
  replay = Replay(trace, options);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ((*replay)[1].start_s, 4250) << "the last job waits for the window to close";
}

TEST(ReservationReplayTest, SomeOneCoreBoardsOrAJobThatNeverFitsAndTheReplayIsRefused) {
  std::mt19937_64 random(1);
  Trace trace = RandomTrace(random);
  ReplayOptions options;
  options.reservations = {SimReservation{0, 3600, 0, {0}}};
  EXPECT_NE(Replay(trace, options).status().message().find("closes all of them or none"),
            std::string::npos);
  options.reservations = {SimReservation{0, 5 * 3600, 6 * 3600, {}}};  // 1 h open in 6
  EXPECT_NE(Replay(trace, options).status().message().find("could never run"), std::string::npos);
  options.mesh_width = options.mesh_height = kSide;
  EXPECT_NE(Replay(trace, options).status().message().find("could never run"), std::string::npos);
  // Two windows that each leave 3 h or more open, and together at most 1 h at a time: a job of
  // more than an hour never fits (it used to be replayed, waiting for ever).
  options.reservations = {SimReservation{0, 3 * 3600, 6 * 3600, {}},
                          SimReservation{4 * 3600, 5400, 6 * 3600, {}}};
  EXPECT_NE(Replay(trace, options).status().message().find("could never run"), std::string::npos);
}

TEST(ReservationReplayTest, TheReservedShareIsTheWindowsAreaOverTheSpan) {
  const std::vector<SimReservation> daily = {SimReservation{2 * 3600, 2 * 3600, 86400, {}}};
  EXPECT_NEAR(ReservedShare(daily, 0, 10 * 86400, 1), 2.0 / 24, 1e-12);
  EXPECT_NEAR(ReservedShare(daily, 3 * 3600, 4 * 3600, 1), 1.0, 1e-12);
  const std::vector<SimReservation> half = {SimReservation{0, 3600, 0, {0}}};
  EXPECT_NEAR(ReservedShare(half, 0, 7200, 2), 0.25, 1e-12);
}

}  // namespace
}  // namespace snn
