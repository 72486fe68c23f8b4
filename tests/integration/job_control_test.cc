// The habits of Slurm users, with real daemons: `snnctl submit --wait` exits with the job's
// outcome; `hold` keeps a pending job from starting and `release` lets it go; after_ok
// dependencies run a preprocessing -> encoding -> network chain in order, and a failed step
// cancels what depends on it, with the reason; after_any and after_not_ok wait for their
// outcome, a singleton for the earlier jobs of its name; `logs` prints a task's output from its
// node (and follows it with -f); `requeue` stops a running job and starts it again.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

class JobControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    cluster_.StartAgent("node1", SmallBoards(2, 4, 1000, 4));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }

  std::string JobFile(const std::string& name, const std::string& script,
                      const std::string& extra = "") {
    const std::string path = cluster_.dir() + "/" + name + ".yaml";
    std::ofstream(path) << "name: " << name << "\n"
                        << extra << "time_limit: 1m\ntask:\n  command: /bin/sh\n  args: [\"-c\", \""
                        << script << "\"]\n  resources: {cores: 1, ksps: 10, streams: 1}\n";
    return path;
  }

  TestCluster cluster_;
};

TEST_F(JobControlTest, SubmitWaitExitsWithTheJobsOutcome) {
  CliRun ok = cluster_.Snnctl({"submit", "--wait", JobFile("ok", "exit 0")});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("Job 1 COMPLETED"), std::string::npos) << ok.out;
  CliRun failed = cluster_.Snnctl({"submit", "--wait", JobFile("bad", "exit 3")});
  EXPECT_EQ(failed.exit_code, 3) << failed.out << failed.err;
  EXPECT_NE(failed.out.find("Job 2 FAILED"), std::string::npos) << failed.out;
}

TEST_F(JobControlTest, AHeldJobWaitsWithTheReasonUntilReleased) {
  // Held while the board is busy, so it cannot have started before the hold.
  ASSERT_TRUE(cluster_.Submit(ShellJob("sleep 600", 16)).ok());
  ASSERT_TRUE(cluster_.Submit(ShellJob("sleep 600", 16)).ok());
  ASSERT_TRUE(cluster_.WaitForState(2, v1::RUNNING));
  ASSERT_TRUE(cluster_.Submit(ShellJob("true")).ok());
  CliRun hold = cluster_.Snnctl({"hold", "3"});
  ASSERT_EQ(hold.exit_code, 0) << hold.err;
  ASSERT_EQ(cluster_.Snnctl({"cancel", "1"}).exit_code, 0);  // room for job 3
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster_.Show(3);
    return job.ok() && job->reason().find("held by") != std::string::npos;
  })) << cluster_.Snnctl({"show", "3"}).out;
  EXPECT_EQ(cluster_.Show(3)->state(), v1::PENDING);
  EXPECT_NE(cluster_.Snnctl({"show", "3"}).out.find("snnctl release 3"), std::string::npos);
  EXPECT_NE(cluster_.Snnctl({"hold", "2"}).err.find("only a pending job is held"),
            std::string::npos);
  ASSERT_EQ(cluster_.Snnctl({"release", "3"}).exit_code, 0);
  EXPECT_TRUE(cluster_.WaitForState(3, v1::COMPLETED));
  EXPECT_NE(cluster_.Snnctl({"release", "3"}).err.find("has ended (COMPLETED)"), std::string::npos);
  ASSERT_EQ(cluster_.Snnctl({"cancel", "2"}).exit_code, 0);
}

TEST_F(JobControlTest, AJobSubmittedHeldWaitsOnAFreeBoardUntilReleased) {
  // As sbatch --hold: by flag, and by the job file's hold: true.
  CliRun flag = cluster_.Snnctl({"submit", "--hold", JobFile("by-flag", "true")});
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  CliRun file = cluster_.Snnctl({"submit", JobFile("by-file", "true", "hold: true\n")});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  // A job submitted after them runs to its end: the passes that started it passed them over.
  ASSERT_EQ(cluster_.Snnctl({"submit", "--wait", JobFile("free", "true")}).exit_code, 0);
  for (uint64_t id : {1, 2}) {
    auto job = cluster_.Show(id);
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(job->state(), v1::PENDING) << id;
    EXPECT_NE(job->reason().find("held by"), std::string::npos) << job->reason();
    EXPECT_FALSE(job->spec().hold()) << "the hold is the record's, as snnctl hold's";
  }
  ASSERT_EQ(cluster_.Snnctl({"release", "1"}).exit_code, 0);
  ASSERT_EQ(cluster_.Snnctl({"release", "2"}).exit_code, 0);
  EXPECT_TRUE(cluster_.WaitForState(1, v1::COMPLETED));
  EXPECT_TRUE(cluster_.WaitForState(2, v1::COMPLETED));
}

TEST_F(JobControlTest, AfterOkRunsAChainInOrderAndAFailedStepCancelsItsDependents) {
  const std::string out = cluster_.dir() + "/chain.txt";
  // Each first step waits for a gate the test opens once its dependents are in (a sleep would
  // race a loaded host).
  const std::string gate = cluster_.dir() + "/gate";
  const std::string held = "while [ ! -e " + gate + " ]; do sleep 0.05; done; ";
  // preprocessing (1) -> encoding (2) -> network (3), each appending its name.
  ASSERT_EQ(cluster_.Snnctl({"submit", JobFile("pre", held + "echo pre >> " + out)}).exit_code, 0);
  ASSERT_EQ(
      cluster_
          .Snnctl({"submit", JobFile("enc", "echo enc >> " + out, "depends: {after_ok: [1]}\n")})
          .exit_code,
      0);
  ASSERT_EQ(
      cluster_
          .Snnctl({"submit", JobFile("net", "echo net >> " + out, "depends: {after_ok: [2]}\n")})
          .exit_code,
      0);
  auto waiting = cluster_.Show(3);
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->state(), v1::PENDING);
  std::ofstream(gate) << "";
  ASSERT_TRUE(cluster_.WaitForState(3, v1::COMPLETED, 30000)) << cluster_.Snnctl({"show", "3"}).out;
  std::ifstream in(out);
  std::string a, b, c;
  in >> a >> b >> c;
  EXPECT_EQ(a + " " + b + " " + c, "pre enc net");

  // A step that fails: what depends on it (directly or not) is cancelled with the reason.
  const std::string gate2 = cluster_.dir() + "/gate2";
  ASSERT_EQ(cluster_
                .Snnctl({"submit", JobFile("bad", "while [ ! -e " + gate2 +
                                                      " ]; do sleep 0.05; done; exit 1")})
                .exit_code,
            0);  // 4
  ASSERT_EQ(cluster_.Snnctl({"submit", JobFile("after-bad", "true", "depends: {after_ok: [4]}\n")})
                .exit_code,
            0);  // 5
  ASSERT_EQ(
      cluster_.Snnctl({"submit", JobFile("after-after", "true", "depends: {after_ok: [5]}\n")})
          .exit_code,
      0);  // 6
  std::ofstream(gate2) << "";
  ASSERT_TRUE(cluster_.WaitForState(6, v1::CANCELLED, 30000));
  EXPECT_NE(cluster_.Show(5)->reason().find("job 4 it depends on (after_ok) ended FAILED"),
            std::string::npos)
      << cluster_.Show(5)->reason();
  // A dependency that can never be met, or that does not exist, is refused at submit.
  CliRun never = cluster_.Snnctl({"submit", JobFile("x", "true", "depends: {after_ok: [4]}\n")});
  EXPECT_NE(never.exit_code, 0);
  EXPECT_NE(never.err.find("job 4 ended FAILED"), std::string::npos) << never.err;
  CliRun missing = cluster_.Snnctl({"submit", JobFile("y", "true", "depends: {after_ok: [99]}\n")});
  EXPECT_NE(missing.err.find("has no job 99"), std::string::npos) << missing.err;
}

TEST_F(JobControlTest, AfterAnyAndAfterNotOkWaitForTheirOutcomeAndSayWhatTheyWaitFor) {
  const std::string gate = cluster_.dir() + "/gate";
  const std::string held = "while [ ! -e " + gate + " ]; do sleep 0.05; done; ";
  auto submit = [&](const std::string& name, const std::string& script,
                    const std::string& depends = "") {
    return cluster_.Snnctl({"submit", JobFile(name, script, depends)});
  };
  ASSERT_EQ(submit("fails", held + "exit 1").exit_code, 0);                           // 1
  ASSERT_EQ(submit("works", held + "exit 0").exit_code, 0);                           // 2
  ASSERT_EQ(submit("any", "true", "depends: {after_any: [1]}\n").exit_code, 0);       // 3
  ASSERT_EQ(submit("notok", "true", "depends: {after_not_ok: [1]}\n").exit_code, 0);  // 4
  ASSERT_EQ(submit("never", "true", "depends: {after_not_ok: [2]}\n").exit_code, 0);  // 5
  ASSERT_EQ(submit("both", "true", "depends: {after_ok: [2], after_not_ok: [1]}\n").exit_code,
            0);  // 6
  // While 1 and 2 run, each says what it waits for.
  auto reason_has = [&](uint64_t id, const std::string& words) {
    return TestCluster::WaitUntil([&] {
      auto job = cluster_.Show(id);
      return job.ok() && job->reason().find(words) != std::string::npos;
    });
  };
  EXPECT_TRUE(reason_has(3, "waiting for job 1 to end (after_any)")) << cluster_.Show(3)->reason();
  EXPECT_TRUE(reason_has(4, "waiting for job 1 to end other than COMPLETED (after_not_ok)"))
      << cluster_.Show(4)->reason();
  EXPECT_TRUE(reason_has(6,
                         "waiting for job 2 to complete (after_ok); job 1 to end other than "
                         "COMPLETED (after_not_ok)"))
      << cluster_.Show(6)->reason();
  EXPECT_EQ(cluster_.Show(3)->state(), v1::PENDING);
  // A job named twice is refused at submit.
  CliRun twice = submit("twice", "true", "depends: {after_ok: [1], after_any: [1]}\n");
  EXPECT_NE(twice.err.find("job 1 is named twice (after_ok, after_any)"), std::string::npos)
      << twice.err;
  std::ofstream(gate) << "";
  ASSERT_TRUE(cluster_.WaitForState(1, v1::FAILED, 30000));
  EXPECT_TRUE(cluster_.WaitForState(3, v1::COMPLETED, 30000)) << cluster_.Show(3)->reason();
  EXPECT_TRUE(cluster_.WaitForState(4, v1::COMPLETED, 30000)) << cluster_.Show(4)->reason();
  EXPECT_TRUE(cluster_.WaitForState(6, v1::COMPLETED, 30000)) << cluster_.Show(6)->reason();
  ASSERT_TRUE(cluster_.WaitForState(5, v1::CANCELLED, 30000)) << cluster_.Show(5)->reason();
  EXPECT_NE(cluster_.Show(5)->reason().find("job 2 it depends on (after_not_ok) ended COMPLETED"),
            std::string::npos)
      << cluster_.Show(5)->reason();
  // Once they have ended: what can never be met is refused; what is met starts at once.
  CliRun never = submit("late", "true", "depends: {after_not_ok: [2]}\n");
  EXPECT_NE(never.err.find("after_not_ok: job 2 ended COMPLETED, so this job could never start"),
            std::string::npos)
      << never.err;
  ASSERT_EQ(submit("after-end", "true", "depends: {after_any: [1, 2]}\n").exit_code, 0);  // 7
  EXPECT_TRUE(cluster_.WaitForState(7, v1::COMPLETED, 30000)) << cluster_.Show(7)->reason();
}

TEST_F(JobControlTest, ASingletonWaitsForEveryEarlierJobOfItsNameAndUser) {
  const std::string gate = cluster_.dir() + "/gate";
  const std::string held = "while [ ! -e " + gate + " ]; do sleep 0.05; done; ";
  auto submit = [&](const std::string& file, const std::string& name, const std::string& script,
                    const std::string& depends = "") {
    const std::string path = cluster_.dir() + "/" + file + ".yaml";
    std::ofstream(path) << "name: " << name << "\n"
                        << depends << "time_limit: 1m\ntask:\n  command: /bin/sh\n"
                        << "  args: [\"-c\", \"" << script << "\"]\n"
                        << "  resources: {cores: 1, ksps: 10, streams: 1}\n";
    return cluster_.Snnctl({"submit", path});
  };
  const std::string singleton = "depends: {singleton: true}\n";
  ASSERT_EQ(submit("a", "sweep", held + "true").exit_code, 0);      // 1
  ASSERT_EQ(submit("b", "sweep", held + "true").exit_code, 0);      // 2
  ASSERT_EQ(submit("c", "sweep", "true", singleton).exit_code, 0);  // 3: after 1, 2
  ASSERT_EQ(submit("d", "other", "true", singleton).exit_code, 0);  // 4: alone
  ASSERT_EQ(submit("e", "sweep", "true", singleton).exit_code, 0);  // 5: after 3
  EXPECT_TRUE(cluster_.WaitForState(4, v1::COMPLETED, 30000)) << cluster_.Show(4)->reason();
  auto reason_has = [&](uint64_t id, const std::string& words) {
    return TestCluster::WaitUntil([&] {
      auto job = cluster_.Show(id);
      return job.ok() && job->reason().find(words) != std::string::npos;
    });
  };
  EXPECT_TRUE(reason_has(3, "waiting for jobs 1, 2 to end (after_any)"))
      << cluster_.Show(3)->reason();
  EXPECT_TRUE(reason_has(5, "waiting for job 3 to end (after_any)")) << cluster_.Show(5)->reason();
  EXPECT_TRUE(cluster_.Show(5)->spec().singleton());
  std::ofstream(gate) << "";
  ASSERT_TRUE(cluster_.WaitForState(5, v1::COMPLETED, 30000)) << cluster_.Show(5)->reason();
  const int64_t first_two_end = std::max(cluster_.Show(1)->end_ms(), cluster_.Show(2)->end_ms());
  EXPECT_GE(cluster_.Show(3)->start_ms(), first_two_end);
  EXPECT_GE(cluster_.Show(5)->start_ms(), cluster_.Show(3)->end_ms());
  // Nothing of its name left: a singleton starts at once.
  ASSERT_EQ(submit("f", "sweep", "true", singleton).exit_code, 0);  // 6
  EXPECT_TRUE(cluster_.WaitForState(6, v1::COMPLETED, 30000)) << cluster_.Show(6)->reason();
  EXPECT_EQ(cluster_.Show(6)->spec().after_any_size(), 0);
}

TEST_F(JobControlTest, ADependentJobStillWaitsAfterAMasterRestartAndThenRuns) {
  const std::string gate = cluster_.dir() + "/gate";  // job 1 ends once the test opens it
  ASSERT_TRUE(
      cluster_.Submit(ShellJob("while [ ! -e " + gate + " ]; do sleep 0.05; done; exit 0")).ok());
  ASSERT_EQ(
      cluster_.Snnctl({"submit", JobFile("next", "true", "depends: {after_ok: [1]}\n")}).exit_code,
      0);
  ASSERT_EQ(cluster_.Snnctl({"submit", JobFile("notok", "true", "depends: {after_not_ok: [1]}\n")})
                .exit_code,
            0);
  ASSERT_EQ(
      cluster_.Snnctl({"submit", JobFile("any", "true", "depends: {after_any: [1]}\n")}).exit_code,
      0);
  ASSERT_TRUE(cluster_.WaitForState(1, v1::RUNNING));
  cluster_.StopMaster();
  cluster_.StartMaster();
  for (uint64_t id : {2, 3, 4}) EXPECT_EQ(cluster_.Show(id)->state(), v1::PENDING) << id;
  std::ofstream(gate) << "";
  EXPECT_TRUE(cluster_.WaitForState(2, v1::COMPLETED, 30000)) << cluster_.Snnctl({"show", "2"}).out;
  EXPECT_GE(cluster_.Show(2)->start_ms(), cluster_.Show(1)->end_ms());
  EXPECT_TRUE(cluster_.WaitForState(4, v1::COMPLETED, 30000)) << cluster_.Snnctl({"show", "4"}).out;
  EXPECT_TRUE(cluster_.WaitForState(3, v1::CANCELLED, 30000)) << cluster_.Snnctl({"show", "3"}).out;
  EXPECT_NE(cluster_.Show(3)->reason().find("job 1 it depends on (after_not_ok) ended COMPLETED"),
            std::string::npos)
      << cluster_.Show(3)->reason();
}

TEST_F(JobControlTest, LogsPrintATasksOutputAndFollowItUntilTheJobEnds) {
  CliRun done = cluster_.Snnctl(
      {"submit", "--wait", JobFile("out", "echo first; echo oops >&2; echo second")});
  ASSERT_EQ(done.exit_code, 0) << done.err;
  CliRun logs = cluster_.Snnctl({"logs", "1"});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "first\nsecond\n");
  EXPECT_EQ(cluster_.Snnctl({"logs", "1", "--stderr"}).out, "oops\n");
  CliRun no_task = cluster_.Snnctl({"logs", "1", "--task", "3"});
  EXPECT_EQ(no_task.exit_code, 1);
  EXPECT_NE(no_task.err.find("job 1 has no task 3"), std::string::npos) << no_task.err;
  EXPECT_NE(cluster_.Snnctl({"logs", "9"}).err.find("job 9 not found"), std::string::npos);

  // -f from before the second line is written to the job's end.
  ASSERT_EQ(cluster_.Snnctl({"submit", JobFile("slow", "echo a; sleep 1.5; echo b")}).exit_code, 0);
  CliRun follow = cluster_.Snnctl({"logs", "2", "-f"});
  ASSERT_EQ(follow.exit_code, 0) << follow.err;
  EXPECT_EQ(follow.out, "a\nb\n");
  EXPECT_GT(follow.seconds, 1.0) << "it returned before the job ended";

  // Another user of the tenant may not read it (output can hold what the env held).
  CliRun stranger = cluster_.RunSnnctlAs("nobody", {"logs", "1", "--tenant", "alice"});
  EXPECT_NE(stranger.exit_code, 0);
}

TEST_F(JobControlTest, RequeueStopsARunningJobAndStartsItAgain) {
  ASSERT_EQ(cluster_.Snnctl({"submit", JobFile("long", "echo run; sleep 600")}).exit_code, 0);
  const pid_t first = static_cast<pid_t>(cluster_.WaitForRunningTask(1).pid());
  ASSERT_NE(first, 0);
  CliRun requeue = cluster_.Snnctl({"requeue", "1"});
  ASSERT_EQ(requeue.exit_code, 0) << requeue.err;
  EXPECT_EQ(requeue.out, "Requeued job 1\n");
  const pid_t second = static_cast<pid_t>(cluster_.WaitForRunningTask(1, 2).pid());
  ASSERT_NE(second, 0) << "the job did not start again";
  EXPECT_NE(second, first);
  auto job = cluster_.Show(1);
  ASSERT_TRUE(job.ok());
  bool said = false;
  for (const auto& h : job->history()) {
    said |= h.reason().find("requeued: asked by") != std::string::npos;
  }
  EXPECT_TRUE(said) << job->DebugString();
  ASSERT_EQ(cluster_.Snnctl({"cancel", "1"}).exit_code, 0);
  CliRun ended = cluster_.Snnctl({"requeue", "1"});
  EXPECT_EQ(ended.exit_code, 1);
  EXPECT_NE(ended.err.find("only a running job can be requeued"), std::string::npos) << ended.err;
}

}  // namespace
}  // namespace snn::testing
