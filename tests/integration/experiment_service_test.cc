// Experiment services with real daemons (issue 37): a service holds a board; users of the
// tenants it admits send experiments; each gets its own results and nobody else's, never sees
// what an earlier user left on the board, and is billed for the board time they used.
// Users are Debian's base system accounts, run with setpriv (as in authorization_test.cc).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "common/base/proto_json.h"
#include "proto/billing.pb.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

// daemon and lp: lab-a (daemon runs the service); sys: lab-b, which the service admits;
// man: lab-c, which it does not.
constexpr char kPolicy[] = R"(access:
  personal_tenants: false
tenants:
  - name: lab-a
    users: [daemon, lp]
  - name: lab-b
    users: [sys]
  - name: lab-c
    users: [man]
)";

constexpr char kService[] = R"(name: quiggeldy
kind: service
service: {period_ms: 5, tenants: [lab-b]}
time_limit: 10m
task:
  resources: {cores: 2x2, ksps: 100, streams: 1}
)";

// One input neuron onto one slow-leaking output neuron: one spike charges it to 0.6, below
// its threshold of 1; a second spike soon after makes it fire.
constexpr char kModel[] = R"({"name": "charge", "timestep_ms": 1,
  "populations": [
    {"name": "in", "size": 1, "role": "input"},
    {"name": "out", "size": 1, "role": "output",
     "neuron": {"tau_m_ms": 100000, "v_threshold": 1, "refractory_ms": 0}}],
  "projections": [{"from": "in", "to": "out", "connectivity": "all_to_all", "weight": 0.6,
                   "delay_steps": 1}]})";

class ExperimentServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "runs snnctl as other users: needs root";
    Write("policy.yaml", kPolicy);
    Write("service.yaml", kService);
    Write("model.json", kModel);
    Write("one.json", R"({"steps": 5, "inputs": [{"population": "in", "neuron": 0, "step": 0}]})");
    Write("two.json", R"({"steps": 5, "inputs": [{"population": "in", "neuron": 0, "step": 0},
                                                {"population": "in", "neuron": 0, "step": 1}]})");
    cluster_.StartMaster({"--policy_file=" + path("policy.yaml")});
    cluster_.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }

  std::string path(const std::string& name) { return cluster_.dir() + "/" + name; }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
    chmod(path(name).c_str(), 0644);  // the users read them
  }
  CliRun As(const std::string& user, std::vector<std::string> args) {
    return cluster_.RunSnnctlAs(user, args);
  }

  TestCluster cluster_;
};

TEST_F(ExperimentServiceTest, EachUserGetsTheirOwnResultsOnAFreshBoardAndIsBilledForTheirTime) {
  CliRun submitted = As("daemon", {"submit", path("service.yaml")});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    CliRun shown = As("daemon", {"show", "1", "-o", "json"});
    return shown.out.find("\"state\": \"RUNNING\"") != std::string::npos;
  }));

  // Two spikes make the output fire: the network and the board work.
  CliRun fired =
      As("daemon", {"experiment", "submit", "1", path("model.json"), path("two.json"), "--wait"});
  ASSERT_EQ(fired.exit_code, 0) << fired.err;
  EXPECT_NE(fired.out.find("experiment 1: DONE"), std::string::npos) << fired.out;
  EXPECT_NE(fired.out.find("out" + std::string(13, ' ') + "0"), std::string::npos) << fired.out;

  // lp leaves the output neuron charged; sys, next, sends one spike: had anything of lp's run
  // stayed on the board, it would fire.
  CliRun charged =
      As("lp", {"experiment", "submit", "1", path("model.json"), path("one.json"), "--wait"});
  ASSERT_EQ(charged.exit_code, 0) << charged.err;
  EXPECT_EQ(charged.out.find("out  "), std::string::npos) << charged.out;
  CliRun fresh = As("sys", {"experiment", "submit", "--service-tenant", "lab-a", "1",
                            path("model.json"), path("one.json"), "--wait"});
  ASSERT_EQ(fresh.exit_code, 0) << fresh.out << fresh.err;
  EXPECT_NE(fresh.out.find("experiment 3: DONE"), std::string::npos) << fresh.out;
  EXPECT_EQ(fresh.out.find("out  "), std::string::npos) << fresh.out;

  // Each user sees only their own experiments; another's ID is as unknown as a made-up one.
  CliRun mine = As("sys", {"experiment", "list", "--service-tenant", "lab-a", "1"});
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  EXPECT_NE(mine.out.find("\n3 "), std::string::npos) << mine.out;
  EXPECT_EQ(mine.out.find("\n1 "), std::string::npos) << mine.out;
  EXPECT_EQ(mine.out.find("\n2 "), std::string::npos) << mine.out;
  for (const char* other : {"1", "2", "99"}) {
    CliRun peek = As("sys", {"experiment", "results", "--service-tenant", "lab-a", "1", other});
    EXPECT_EQ(peek.exit_code, 1) << other;
    EXPECT_NE(peek.err.find("you have no experiment " + std::string(other)), std::string::npos)
        << peek.err;
  }
  CliRun theirs = As("daemon", {"experiment", "results", "1", "2"});
  EXPECT_EQ(theirs.exit_code, 1) << theirs.out;  // lp's, not daemon's, though daemon runs it

  // A tenant the service does not admit learns nothing, and nothing is queued.
  CliRun outsider = As("man", {"experiment", "submit", "--service-tenant", "lab-a", "1",
                               path("model.json"), path("one.json")});
  EXPECT_EQ(outsider.exit_code, 1);
  EXPECT_NE(outsider.err.find("tenant 'lab-a' has no experiment service 1 open to tenant 'lab-c'"),
            std::string::npos)
      << outsider.err;
  // Bad input: one line, nothing queued.
  Write("late.json", R"({"steps": 5, "inputs": [{"population": "in", "neuron": 0, "step": 9}]})");
  CliRun late = As("lp", {"experiment", "submit", "1", path("model.json"), path("late.json")});
  EXPECT_EQ(late.exit_code, 1);
  EXPECT_NE(late.err.find("experiment 0: input 0 fires at step 9, but the experiment runs steps 0 "
                          "to 4"),
            std::string::npos)
      << late.err;

  // Cancelled, the service bills each user's board time to their own tenant.
  ASSERT_EQ(As("daemon", {"cancel", "1"}).exit_code, 0);
  v1::UsageRequest usage;
  usage.set_all_tenants(true);
  std::map<std::string, v1::UsageRecord> experiments;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto records = cluster_.Client()->Call(rpc::kBillingUsage, usage);
    if (!records.ok()) return false;
    experiments.clear();
    for (const auto& r : records->records()) {
      if (r.kind() == "experiment") experiments[r.tenant() + "/" + r.user()] = r;
    }
    return experiments.size() == 3;
  })) << experiments.size();
  for (const char* who : {"lab-a/daemon", "lab-a/lp", "lab-b/sys"}) {
    const v1::UsageRecord& r = experiments[who];
    EXPECT_EQ(r.experiments(), 1u) << who;
    EXPECT_GE(r.busy_us(), 5000) << who;  // 5 steps of 1 ms: the board runs in real time
    EXPECT_EQ(r.cores(), 4u) << who;
  }
  // The service itself was billed to its owner for the rest of its time.
  CliRun report = As("daemon", {"usage", "-o", "json"});
  EXPECT_NE(report.out.find("\"kind\": \"service\""), std::string::npos) << report.out;
}

// Every experiment the master acknowledged runs and is recorded once, though the master is
// killed (SIGKILL) while they run: those it had not recorded as finished run again.
TEST_F(ExperimentServiceTest, AcknowledgedExperimentsSurviveAMasterKilledWhileTheyRun) {
  auto client = cluster_.Client("root", "lab-a");  // an admin, acting for lab-a
  v1::SubmitRequest submit;
  v1::JobSpec& spec = *submit.mutable_spec();
  spec.set_kind(v1::SERVICE);
  spec.set_time_limit_s(600);
  spec.mutable_task()->mutable_resources()->set_cores(4);
  spec.mutable_task()->mutable_resources()->set_ksps(100);
  auto service = client->Call(rpc::kJobSubmit, submit);
  ASSERT_TRUE(service.ok()) << service.status().ToString();
  v1::ExperimentSubmitRequest send;
  send.set_service(service->tenant_job_id());
  for (int i = 0; i < 100; ++i) {
    v1::ExperimentSpec& e = *send.add_experiments();
    ASSERT_TRUE(FromJson(kModel, *e.mutable_model()).ok());
    e.set_steps(20);  // 20 ms each: two seconds of board time in all
    for (uint32_t step : {0u, 1u}) {
      v1::NamedSpike* in = e.add_inputs();
      in->set_population("in");
      in->set_step(step);
    }
  }
  auto sent = client->Call(rpc::kExperimentSubmit, send);  // queued while the service waits
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  ASSERT_EQ(sent->count(), 100u);
  v1::ExperimentListRequest list;
  list.set_service(service->tenant_job_id());
  list.set_limit(10000);
  auto finished = [&](RpcClient& c) {
    auto page = c.Call(rpc::kExperimentList, list);
    size_t n = 0;
    if (page.ok()) {
      for (const auto& r : page->experiments()) n += r.state() == v1::EXPERIMENT_DONE;
    }
    return n;
  };
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return finished(*client) >= 10; }));
  cluster_.KillMaster();
  cluster_.StartMaster({"--policy_file=" + path("policy.yaml")});
  auto again = cluster_.Client("root", "lab-a");
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return finished(*again) == 100; }, 60000));
  auto all = again->Call(rpc::kExperimentList, list);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->experiments_size(), 100);  // each once
  list.set_outputs(true);
  all = again->Call(rpc::kExperimentList, list);
  ASSERT_TRUE(all.ok());
  for (int i = 0; i < 100; ++i) {
    const v1::ExperimentRecord& r = all->experiments(i);
    EXPECT_EQ(r.id(), uint64_t(i) + sent->first_id());
    EXPECT_EQ(r.state(), v1::EXPERIMENT_DONE) << r.error();
    ASSERT_EQ(r.outputs_size(), 1) << r.id();  // two spikes: the output fires once
    EXPECT_EQ(r.outputs(0).population(), "out");
  }
}

}  // namespace
}  // namespace snn::testing
