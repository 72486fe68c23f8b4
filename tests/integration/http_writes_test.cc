// The HTTP API's writes on real daemons: each operation snnctl does (hold, release, queue set,
// tenant set, members, credit, drain, resume, a simulated fault, node add, revoke and a join
// token), done once with snnctl and once over HTTP on a twin object, leaves the same state.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "common/base/proto_json.h"
#include "proto/policy.pb.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/http_client.h"

namespace snn::testing {
namespace {

constexpr char kPolicy[] = R"(access:
  personal_tenants: false
tenants:
  - name: lab-a
    users: [root, daemon]
  - name: lab-b
    users: [root]
)";

// Job 1 runs; jobs 2 and 3 wait for it.
constexpr char kFirst[] = R"(name: first
tenant: lab-a
time_limit: 10m
task:
  command: /bin/sleep
  args: ["600"]
  resources: {cores: 1, ksps: 10, streams: 1}
)";
constexpr char kAfter[] = R"(name: after
tenant: lab-a
depends: {after_ok: [1]}
task:
  command: /bin/true
  resources: {cores: 1, ksps: 10, streams: 1}
)";

class HttpWritesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "makes a token of root's with MUNGE: needs root";
    std::ofstream(cluster_.dir() + "/policy.yaml") << kPolicy;
    port_ = cluster_.StartMasterWithApi({"--policy_file=" + cluster_.dir() + "/policy.yaml"});
    ASSERT_NE(port_, 0) << ReadFile(cluster_.dir() + "/master.log");
    cluster_.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
    CliRun token = cluster_.Snnctl({"token", "create", "--parsable"}, "lab-a");
    ASSERT_EQ(token.exit_code, 0) << token.err;
    token_ = token.out.substr(0, token.out.find('\n'));
  }

  HttpResult Http(const std::string& method, const std::string& target,
                  const std::string& body = "") {
    HttpCall call{method, target, token_, body, {{"Snn-Tenant", "lab-a"}}};
    auto result = HttpDo("127.0.0.1", port_, cluster_.auth().ca_file(), call);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : HttpResult{};
  }
  CliRun Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {"-o", "json"});
    CliRun run = cluster_.Snnctl(args, "lab-a");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run;
  }
  v1::SchedulingConfig Policy() {
    v1::PolicyGetResponse policy;
    EXPECT_TRUE(FromJson(Http("GET", "/v1/policy").body, policy).ok());
    return policy.config();
  }
  std::string Pool() { return Http("GET", "/v1/pool").body; }

  TestCluster cluster_;
  uint16_t port_ = 0;
  std::string token_;
};

TEST_F(HttpWritesTest, HoldAndReleaseAsSnnctl) {
  std::ofstream(cluster_.dir() + "/first.yaml") << kFirst;
  std::ofstream(cluster_.dir() + "/after.yaml") << kAfter;
  ASSERT_EQ(cluster_.Snnctl({"submit", cluster_.dir() + "/first.yaml"}, "lab-a").exit_code, 0);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(cluster_.Snnctl({"submit", cluster_.dir() + "/after.yaml"}, "lab-a").exit_code, 0);
  }
  auto held = [&](uint64_t id) {
    auto job = cluster_.Show(id, "lab-a");
    return job.ok() ? job->user_hold() : std::string("?");
  };
  Cli({"hold", "2"});
  EXPECT_EQ(Http("POST", "/v1/jobs/3/hold").status, 200);
  EXPECT_EQ(held(2), "root");
  EXPECT_EQ(held(3), held(2));
  Cli({"release", "2"});
  EXPECT_EQ(Http("POST", "/v1/jobs/3/release").status, 200);
  EXPECT_EQ(held(2), "");
  EXPECT_EQ(held(3), "");
}

TEST_F(HttpWritesTest, PolicyWritesAsSnnctl) {
  Cli({"queue", "set", "qa", "--create", "--priority", "5", "--weight", "2", "--pool", "default",
       "--max", "8"});
  HttpResult queue = Http("PUT", "/v1/queues",
                          R"({"queue": {"name": "qb", "priority": 5, "weight": 2,
                               "pools": [{"pool": "default", "limit": 8}]}, "create": true})");
  ASSERT_EQ(queue.status, 200) << queue.body;
  Cli({"tenant", "set", "ta", "--create", "--weight", "3"});
  HttpResult tenant =
      Http("PUT", "/v1/tenants", R"({"tenant": {"name": "tb", "weight": 3}, "create": true})");
  ASSERT_EQ(tenant.status, 200) << tenant.body;
  Cli({"tenant", "add-user", "ta", "daemon"});
  HttpResult members = Http("POST", "/v1/tenants/tb/members", R"({"add_users": ["daemon"]})");
  ASSERT_EQ(members.status, 200) << members.body;
  const v1::SchedulingConfig policy = Policy();
  auto named = [](const auto& list, const std::string& name, const std::string& as) {
    for (auto item : list) {
      if (item.name() == name) {
        item.set_name(as);
        return ToJson(item);
      }
    }
    return std::string("(none named ") + name + ")";
  };
  EXPECT_EQ(named(policy.queues(), "qb", "qa"), named(policy.queues(), "qa", "qa"));
  EXPECT_EQ(named(policy.tenants(), "tb", "ta"), named(policy.tenants(), "ta", "ta"));
  EXPECT_NE(named(policy.tenants(), "tb", "tb").find("daemon"), std::string::npos);
  // A change that names only a quota keeps what it does not name (the weight was reset to 0).
  Cli({"tenant", "set", "ta", "--pool", "default", "--limit", "4"});
  HttpResult quota = Http("PUT", "/v1/tenants",
                          R"({"tenant": {"name": "tb", "quotas": [{"pool": "default",
                               "limit": 4}]}})");
  ASSERT_EQ(quota.status, 200) << quota.body;
  const v1::SchedulingConfig changed = Policy();
  EXPECT_EQ(named(changed.tenants(), "tb", "ta"), named(changed.tenants(), "ta", "ta"));
  EXPECT_NE(named(changed.tenants(), "tb", "tb").find("\"weight\": 3"), std::string::npos)
      << named(changed.tenants(), "tb", "tb");

  // Credits: the same amount lands on each tenant's account.
  CliRun credit = Cli({"tenant", "credit", "lab-a", "5"});
  HttpResult http_credit = Http("POST", "/v1/credits", R"({"tenant": "lab-b", "micros": 5000000})");
  ASSERT_EQ(http_credit.status, 200) << http_credit.body;
  v1::CreditResponse a, b;
  ASSERT_TRUE(FromJson(credit.out, a).ok()) << credit.out;
  ASSERT_TRUE(FromJson(http_credit.body, b).ok()) << http_credit.body;
  EXPECT_EQ(a.account().credit_micros(), 5000000);
  EXPECT_EQ(b.account().credit_micros(), a.account().credit_micros());
}

TEST_F(HttpWritesTest, NodeWritesAsSnnctl) {
  // Drain with a reason, resume: the pool says so either way.
  Cli({"node", "drain", "node1", "--reason", "by-snnctl"});
  EXPECT_TRUE(
      TestCluster::WaitUntil([&] { return Pool().find("by-snnctl") != std::string::npos; }));
  Cli({"node", "resume", "node1"});
  EXPECT_EQ(Http("POST", "/v1/nodes/node1/drain", R"({"reason": "by-http"})").status, 200);
  EXPECT_TRUE(TestCluster::WaitUntil([&] {
    const std::string pool = Pool();
    return pool.find("by-http") != std::string::npos && pool.find("by-snnctl") == std::string::npos;
  }));
  EXPECT_EQ(Http("POST", "/v1/nodes/node1/resume").status, 200);
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return Pool().find("by-http") == std::string::npos; }));
  // A core killed each way is dead either way.
  Cli({"sim", "kill-core", "node1/0", "1,1"});
  HttpResult fault = Http("POST", "/v1/nodes/node1/faults", R"({"board": 0, "x": 2, "y": 2})");
  EXPECT_EQ(fault.status, 200) << fault.body;
  EXPECT_TRUE(TestCluster::WaitUntil([&] {
    auto pool = cluster_.Pool();
    if (!pool.ok() || pool->nodes_size() != 1) return false;
    std::string dead;
    for (const auto& c : pool->nodes(0).boards(0).info().dead_cores()) {
      dead += std::to_string(c.x()) + "," + std::to_string(c.y()) + ";";
    }
    return dead == "1,1;2,2;";
  }));
  // A node's inventory approved either way; then its certificates revoked.
  const std::string boards = cluster_.dir() + "/boards7.yaml";
  std::ofstream(boards) << SmallBoards(2, 4, 1000, 4);
  v1::NodeAddResponse by_cli;
  ASSERT_TRUE(FromJson(Cli({"node", "add", "node7", "--boards", boards}).out, by_cli).ok());
  v1::NodeAddRequest add;
  add.set_node("node8");
  *add.mutable_boards() = by_cli.approval().boards();
  HttpResult added = Http("POST", "/v1/nodes", ToJson(add));
  v1::NodeAddResponse by_http;
  ASSERT_TRUE(FromJson(added.body, by_http).ok()) << added.body;
  by_http.mutable_approval()->set_node("node7");
  by_http.mutable_approval()->set_approved_ms(by_cli.approval().approved_ms());  // its own time
  EXPECT_EQ(ToJson(by_http), ToJson(by_cli));
  EXPECT_EQ(cluster_.Snnctl({"node", "revoke", "node7"}, "lab-a").exit_code, 0);
  v1::NodeRevokeResponse revoked;
  ASSERT_TRUE(FromJson(Http("POST", "/v1/nodes/node8/revoke").body, revoked).ok());
  EXPECT_TRUE(revoked.approval().revoked());
  // A join token either way (snnctl prints the token alone).
  const std::string cli_token = Cli({"node", "token", "node7"}).out;
  v1::NodeTokenResponse http_token;
  ASSERT_TRUE(FromJson(Http("POST", "/v1/nodes/node8/token").body, http_token).ok());
  EXPECT_FALSE(http_token.token().empty());
  EXPECT_EQ(http_token.token().size() + 1, cli_token.size()) << cli_token;
}

}  // namespace
}  // namespace snn::testing
