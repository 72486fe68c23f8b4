// Advance reservations with real daemons (issue 40), one test per flag and one without: a
// reservation's jobs wait for it and start on its boards once it opens; no other job starts on
// its boards that would still run then; a job that cannot run in it, or a tenant not in it, is
// refused at submit with one line; daily reservations repeat (and may start in the past),
// maintenance may overlap another reservation and closes its boards to everyone, ignore_jobs
// reserves boards running jobs still hold, flex jobs may start before and outlast it.
// Reservations outlive a master restart.
#include <gtest/gtest.h>

#include <ctime>
#include <fstream>

#include "common/base/clock.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

// "2026-11-27T18:00:05", as --start takes it (UTC): `seconds_from` after `from`.
std::string UtcIn(int64_t seconds_from, time_t from = SystemClock().NowMs() / 1000) {
  const time_t t = from + seconds_from;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

class ReservationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    cluster_.StartAgent("node1", SmallBoards(2, 2, 1000, 4));  // two boards of 4 cores
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }
  // A job of `cores` that sleeps; in `reservation` when one is given.
  CliRun Submit(const std::string& tenant, int cores, const std::string& time_limit,
                const std::string& reservation = "") {
    const std::string path = cluster_.dir() + "/j.yaml";
    std::ofstream(path) << "name: j\ntime_limit: " << time_limit
                        << (reservation.empty() ? "" : "\nreservation: " + reservation)
                        << "\ntask:\n  command: /bin/sleep\n  args: [\"600\"]\n"
                           "  resources: {cores: "
                        << cores << ", ksps: 10, streams: 1}\n";
    return cluster_.Snnctl({"submit", path}, tenant);
  }
  CliRun Reserve(std::vector<std::string> args) {
    args.insert(args.begin(), {"reservation", "create"});
    return cluster_.Snnctl(args);
  }
  bool Running(const std::string& tenant, uint64_t id) {
    return TestCluster::WaitUntil([&] {
      auto job = cluster_.Show(id, tenant);
      return job.ok() && job->state() == v1::RUNNING;
    });
  }
  bool ReasonHas(const std::string& tenant, uint64_t id, const std::string& words) {
    return TestCluster::WaitUntil([&] {
      auto job = cluster_.Show(id, tenant);
      return job.ok() && job->reason().find(words) != std::string::npos;
    });
  }
  std::string ReasonOf(const std::string& tenant, uint64_t id) {
    auto job = cluster_.Show(id, tenant);
    return job.ok() ? job->reason() : job.status().ToString();
  }
  // The reservation's row in `reservation list` ("" if none).
  std::string Row(const std::string& name) {
    const std::string out = cluster_.Snnctl({"reservation", "list"}).out;
    const size_t at = out.find("\n" + name + " ");
    return at == std::string::npos ? "" : out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  }

  TestCluster cluster_;
};

TEST_F(ReservationsTest, ItsJobsStartOnItsBoardsWhenItOpensAndNoOtherJobRunsIntoIt) {
  // `later` opens in an hour: its job waits, saying until when (whatever the host's speed).
  ASSERT_EQ(Reserve({"later", "--start", "now+1h", "--duration", "10m", "--boards", "node1/1",
                     "--tenants", "lab"})
                .exit_code,
            0);
  ASSERT_EQ(Submit("lab", 1, "5m", "later").exit_code, 0);
  ASSERT_TRUE(ReasonHas("lab", 1, "waiting for reservation later to start at "))
      << ReasonOf("lab", 1);
  // `course` opens in seconds.
  CliRun created = Reserve({"course", "--start", "now+5s", "--duration", "10m", "--boards",
                            "node1/0", "--tenants", "lab"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_NE(created.out.find("Reservation course: "), std::string::npos) << created.out;
  ASSERT_EQ(Submit("lab", 4, "5m", "course").exit_code, 0);
  // Another tenant's whole-board job goes to the board that stays open longer than its time
  // limit; a second one waits: what is free closes before its time limit would end.
  ASSERT_EQ(Submit("other", 4, "30m").exit_code, 0);
  ASSERT_TRUE(Running("other", 1));
  EXPECT_EQ(cluster_.Show(1, "other")->tasks(0).board(), 1u);
  ASSERT_EQ(Submit("other", 4, "30m").exit_code, 0);
  ASSERT_TRUE(ReasonHas("other", 2, "boards of reservation course ")) << ReasonOf("other", 2);
  // Once it opens, its job starts there, and not before.
  ASSERT_TRUE(Running("lab", 2));
  auto job = cluster_.Show(2, "lab");
  EXPECT_EQ(job->tasks(0).board(), 0u);
  auto list = cluster_.Snnctl({"-o", "json", "reservation", "list"});
  ASSERT_NE(list.out.find("\"start_ms\""), std::string::npos) << list.out;
  const size_t at = list.out.find("\"start_ms\": \"") + 13;
  EXPECT_GE(job->start_ms(), std::stoll(list.out.substr(at))) << list.out;
  EXPECT_NE(Row("course").find("ACTIVE"), std::string::npos) << Row("course");
  EXPECT_EQ(cluster_.Show(2, "other")->state(), v1::PENDING);
  EXPECT_NE(cluster_.Snnctl({"show", "2"}, "lab").out.find("Reservation: course"),
            std::string::npos);
  // What can never run in it is refused at submit, with one line each.
  CliRun too_long = Submit("lab", 1, "20m", "course");
  EXPECT_EQ(too_long.exit_code, 1);
  EXPECT_EQ(too_long.err,
            "snnctl: the job's time limit (20m) is longer than reservation course lasts (10m): it "
            "could never run in it; ask for less time (time_limit)\n");
  CliRun outsider = Submit("other", 1, "1m", "course");
  EXPECT_EQ(outsider.err, "snnctl: tenant other is not one of reservation course's tenants\n");
  CliRun unknown = Submit("lab", 1, "1m", "nosuch");
  EXPECT_EQ(unknown.err, "snnctl: no reservation nosuch (snnctl reservation list)\n");
  // A master restart keeps it.
  cluster_.StopMaster();
  cluster_.StartMaster();
  EXPECT_NE(Row("course").find("node1/0"), std::string::npos);
  // Deleted, its board is open to everyone again.
  ASSERT_EQ(cluster_.Snnctl({"reservation", "delete", "course"}).exit_code, 0);
  ASSERT_EQ(cluster_.Snnctl({"cancel", "2"}, "lab").exit_code, 0);
  ASSERT_TRUE(Running("other", 2));
}

TEST_F(ReservationsTest, DailyRepeatsEveryDayAndMayHaveStartedYesterday) {
  // Yesterday, 10 s from now: the next occurrence opens 10 s from now.
  const time_t now = SystemClock().NowMs() / 1000;
  const std::string yesterday = UtcIn(10 - 24 * 3600, now);
  std::string next = UtcIn(10, now);  // as reservation list prints it
  next[10] = ' ';
  CliRun once = Reserve({"once", "--start", yesterday, "--duration", "1h", "--boards", "node1/0",
                         "--tenants", "lab"});
  EXPECT_EQ(once.exit_code, 1);
  EXPECT_NE(once.err.find("would start in the past"), std::string::npos) << once.err;
  CliRun daily = Reserve({"nightly", "--start", yesterday, "--duration", "1h", "--boards",
                          "node1/0", "--tenants", "lab", "--flags", "daily"});
  ASSERT_EQ(daily.exit_code, 0) << daily.err;
  // Listed at its next occurrence (today, open or about to), not yesterday's.
  EXPECT_NE(Row("nightly").find(next + " UTC"), std::string::npos) << Row("nightly");
  CliRun too_long = Reserve({"long", "--start", "now+1h", "--duration", "24h", "--boards",
                             "node1/1", "--tenants", "lab", "--flags", "daily"});
  EXPECT_EQ(too_long.err, "snnctl: a daily reservation must last less than 24h, not 1d\n");
  // Another tenant's 30m job keeps off its board, whichever day it is.
  ASSERT_EQ(Submit("other", 4, "30m").exit_code, 0);
  ASSERT_TRUE(Running("other", 1));
  EXPECT_EQ(cluster_.Show(1, "other")->tasks(0).board(), 1u);
  ASSERT_EQ(Submit("lab", 4, "30m", "nightly").exit_code, 0);
  ASSERT_TRUE(Running("lab", 1));
  EXPECT_EQ(cluster_.Show(1, "lab")->tasks(0).board(), 0u);
}

TEST_F(ReservationsTest, MaintenanceMayOverlapAnotherAndClosesItsBoardsToEveryone) {
  ASSERT_EQ(Reserve({"course", "--start", "now+1h", "--duration", "2h", "--boards", "node1/0",
                     "--tenants", "lab"})
                .exit_code,
            0);
  CliRun clash = Reserve({"clash", "--start", "now+90m", "--duration", "1h", "--boards",
                          "node1/0,node1/1", "--tenants", "lab"});
  EXPECT_EQ(clash.err, "snnctl: board node1/0: it is in reservation course at the same time\n");
  CliRun nobody = Reserve({"nobody", "--start", "now", "--duration", "1h", "--count", "2"});
  EXPECT_NE(nobody.err.find("a reservation with no --tenants is closed to every job"),
            std::string::npos)
      << nobody.err;
  CliRun maint =
      Reserve({"fans", "--start", "now", "--duration", "3h", "--count", "2", "--flags", "maint"});
  ASSERT_EQ(maint.exit_code, 0) << maint.err;
  EXPECT_NE(maint.out.find("boards node1/0,node1/1"), std::string::npos) << maint.out;
  // Nobody's job starts during maintenance.
  ASSERT_EQ(Submit("lab", 1, "1m").exit_code, 0);
  ASSERT_TRUE(ReasonHas("lab", 1, "boards of reservation fans are closed to it"))
      << ReasonOf("lab", 1);
  ASSERT_EQ(cluster_.Snnctl({"reservation", "delete", "fans"}).exit_code, 0);
  ASSERT_TRUE(Running("lab", 1));
}

TEST_F(ReservationsTest, IgnoreJobsReservesBoardsThatRunningJobsStillHold) {
  ASSERT_EQ(Submit("other", 4, "30m").exit_code, 0);
  ASSERT_TRUE(Running("other", 1));
  const uint32_t busy = cluster_.Show(1, "other")->tasks(0).board();
  const std::string board = "node1/" + std::to_string(busy);
  CliRun refused = Reserve(
      {"calib", "--start", "now+10m", "--duration", "1h", "--boards", board, "--tenants", "lab"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(
      refused.err.find("snnctl: board " + board + ": job 1 of tenant other may run on it until"),
      std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("--flags ignore_jobs reserves it anyway"), std::string::npos);
  // Both boards by count: one is busy, so only one is free for it.
  CliRun short_of = Reserve(
      {"calib", "--start", "now+10m", "--duration", "1h", "--count", "2", "--tenants", "lab"});
  EXPECT_NE(short_of.err.find("pool 'default' has 1 of 2 boards free for it"), std::string::npos)
      << short_of.err;
  CliRun taken = Reserve({"calib", "--start", "now+10m", "--duration", "1h", "--boards", board,
                          "--tenants", "lab", "--flags", "ignore_jobs"});
  ASSERT_EQ(taken.exit_code, 0) << taken.err;
  EXPECT_EQ(cluster_.Show(1, "other")->state(), v1::RUNNING);  // it finishes
  EXPECT_NE(Row("calib").find("ignore_jobs"), std::string::npos) << Row("calib");
}

TEST_F(ReservationsTest, FlexJobsMayStartBeforeItAndOutlastIt) {
  ASSERT_EQ(Reserve({"demo", "--start", "now+1h", "--duration", "30m", "--boards", "node1/0",
                     "--tenants", "lab", "--flags", "flex"})
                .exit_code,
            0);
  // Two hours, longer than it lasts, starting before it: on its board too (both boards' worth).
  ASSERT_EQ(Submit("lab", 4, "2h", "demo").exit_code, 0);
  ASSERT_EQ(Submit("lab", 4, "2h", "demo").exit_code, 0);
  ASSERT_TRUE(Running("lab", 1));
  ASSERT_TRUE(Running("lab", 2));
  // Without flex the same job is refused: it could never run in it.
  ASSERT_EQ(Reserve({"strict", "--start", "now+5h", "--duration", "30m", "--boards", "node1/1",
                     "--tenants", "lab"})
                .exit_code,
            0);
  EXPECT_NE(Submit("lab", 4, "2h", "strict").err.find("is longer than reservation strict lasts"),
            std::string::npos);
}

}  // namespace
}  // namespace snn::testing
