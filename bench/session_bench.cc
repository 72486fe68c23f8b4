// Sessions, run by hand (issue 37): how long a session takes to be granted on an idle pool,
// and how many steps a session runs per second. One master and one agent with a simulated
// board on this host. Grants: --grants sessions one after another, each timed from its submit
// to RUNNING as a client asking every millisecond sees it, then released. Steps: one session,
// --steps steps of `true` submitted back to back (each answered once durable; the master
// starts each when the one before it has ended), timed from the first submit to the last
// step's end; then --waited steps one at a time, each waited for by its client (as
// `snnctl run` does). Prints the grant median and p90, and the steps per second of both.
#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "common/base/clock.h"
#include "common/daemon/program_flags.h"
#include "common/rpc/rpc_methods.h"
#include "tests/integration/cluster.h"

DEFINE_int32(grants, 50, "sessions granted one after another");
DEFINE_int32(steps, 1000, "steps submitted back to back into one session");
DEFINE_int32(waited, 200, "steps run one at a time, each waited for");
DEFINE_string(cgroups, "auto", "the agent's --cgroups (auto, v1, v2, off)");

namespace snn::testing {
namespace {

double Ms(const Stopwatch& since) { return since.Seconds() * 1000; }

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

v1::JobState StateOf(RpcClient& client, uint64_t id) {
  v1::ShowJobRequest show;
  show.mutable_job()->set_tenant_job_id(id);
  auto job = client.Call(rpc::kJobShow, show);
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return job.ok() ? job->job().state() : v1::FAILED;
}

uint64_t SubmitSession(RpcClient& client) {
  v1::SubmitRequest submit;
  v1::JobSpec& spec = *submit.mutable_spec();
  spec.set_kind(v1::SESSION);
  spec.set_name("bench");
  auto* r = spec.mutable_task()->mutable_resources();
  r->set_cores(4);
  r->set_ksps(10);
  auto done = client.Call(rpc::kJobSubmit, submit);
  EXPECT_TRUE(done.ok()) << done.status().ToString();
  return done.ok() ? done->tenant_job_id() : 0;
}

uint64_t SubmitStep(RpcClient& client, uint64_t session) {
  v1::SubmitRequest submit;
  v1::JobSpec& spec = *submit.mutable_spec();
  spec.set_kind(v1::STEP);
  spec.set_alloc(session);
  spec.mutable_task()->set_command("/bin/true");
  auto done = client.Call(rpc::kJobSubmit, submit);
  EXPECT_TRUE(done.ok()) << done.status().ToString();
  return done.ok() ? done->tenant_job_id() : 0;
}

void WaitFor(RpcClient& client, uint64_t id, v1::JobState state) {
  for (;;) {
    const v1::JobState now = StateOf(client, id);
    if (now == state) return;
    ASSERT_TRUE(now == v1::PENDING || now == v1::RUNNING) << v1::JobState_Name(now);
    SleepRealMs(1);
  }
}

TEST(SessionBench, GrantsAndSteps) {
  TestCluster cluster;
  cluster.StartMaster({"--minloglevel=1"});
  cluster.StartAgent("node1", SmallBoards(1, 8), {"--minloglevel=1", "--cgroups=" + FLAGS_cgroups});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  auto client = cluster.Client("alice");

  std::vector<double> grant_ms;
  for (int i = 0; i < FLAGS_grants; ++i) {
    const Stopwatch start;
    const uint64_t id = SubmitSession(*client);
    ASSERT_NO_FATAL_FAILURE(WaitFor(*client, id, v1::RUNNING));
    grant_ms.push_back(Ms(start));
    v1::CancelRequest cancel;
    cancel.mutable_job()->set_tenant_job_id(id);
    ASSERT_TRUE(client->Call(rpc::kJobCancel, cancel).ok());
  }

  const uint64_t session = SubmitSession(*client);
  ASSERT_NO_FATAL_FAILURE(WaitFor(*client, session, v1::RUNNING));
  const Stopwatch queued_start;
  uint64_t last = 0;
  for (int i = 0; i < FLAGS_steps; ++i) last = SubmitStep(*client, session);
  const double submitted_ms = Ms(queued_start);
  ASSERT_NO_FATAL_FAILURE(WaitFor(*client, last, v1::COMPLETED));
  const double queued_ms = Ms(queued_start);

  const Stopwatch waited_start;
  for (int i = 0; i < FLAGS_waited; ++i) {
    ASSERT_NO_FATAL_FAILURE(WaitFor(*client, SubmitStep(*client, session), v1::COMPLETED));
  }
  const double waited_ms = Ms(waited_start);
  // Where a queued step's time goes: in its task (launch to exit, as the agent saw it), and
  // between one task's end and the next one's start (the master, and the launch message).
  double in_task_ms = 0, between_ms = 0;
  int64_t previous_end = 0;
  for (uint64_t id = last - FLAGS_steps + 1; id <= last; ++id) {
    v1::ShowJobRequest step;
    step.mutable_job()->set_tenant_job_id(id);
    auto job = client->Call(rpc::kJobShow, step);
    ASSERT_TRUE(job.ok() && job->job().tasks_size() == 1);
    const v1::TaskRecord& t = job->job().tasks(0);
    in_task_ms += double(t.end_ms() - t.start_ms());
    if (previous_end != 0) between_ms += double(t.start_ms() - previous_end);
    previous_end = t.end_ms();
  }
  v1::ShowJobRequest show;
  show.mutable_job()->set_tenant_job_id(session);
  auto record = client->Call(rpc::kJobShow, show);
  ASSERT_TRUE(record.ok());
  ASSERT_EQ(record->job().steps(), uint64_t(FLAGS_steps + FLAGS_waited));

  std::printf("grant: median %.1f ms, p90 %.1f ms (%d sessions)\n", Percentile(grant_ms, 0.5),
              Percentile(grant_ms, 0.9), FLAGS_grants);
  std::printf("steps queued: %d in %.0f ms (submitted in %.0f ms): %.0f steps/s\n", FLAGS_steps,
              queued_ms, submitted_ms, FLAGS_steps * 1000.0 / queued_ms);
  std::printf("  per queued step: %.2f ms in its task, %.2f ms between tasks\n",
              in_task_ms / FLAGS_steps, between_ms / (FLAGS_steps - 1));
  std::printf("steps waited for one at a time: %d in %.0f ms: %.0f steps/s\n", FLAGS_waited,
              waited_ms, FLAGS_waited * 1000.0 / waited_ms);
}

}  // namespace
}  // namespace snn::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  snn::ParseProgramFlags(
      &argc, &argv, "session_bench [--grants=50] [--steps=1000] [--waited=200] [--cgroups=auto]");
  return RUN_ALL_TESTS();
}
