// Identity and authority on real daemons: users proven by MUNGE (snnctl run as other Unix users
// with setpriv), nodes by their certificates. Each action is tried by a caller without the right
// (refused, with one line naming the right, and nothing changes) and by one with it (works).
// The users are Debian's base system accounts, present on every Debian 12 machine.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/base/file_util.h"
#include "common/identity/munge.h"
#include "common/identity/pki.h"
#include "common/rpc/tls.h"
#include "proto/policy.pb.h"
#include "snn_paths.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/process.h"

namespace snn::testing {
namespace {

// daemon and lp: members of lab-a; bin: lab-a's coordinator; sys: lab-b; games: operator;
// man: reader; nobody: no tenant at all. root (this process) is an admin.
constexpr char kPolicy[] = R"(access:
  operators: {users: [games]}
  readers: {users: [man]}
  personal_tenants: false
tenants:
  - name: lab-a
    users: [daemon, lp]
    coordinators: [bin]
  - name: lab-b
    users: [sys]
)";

class AuthorizationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "runs snnctl as other users: needs root";
    std::ofstream(cluster_.dir() + "/policy.yaml") << kPolicy;
    cluster_.StartMaster({"--policy_file=" + cluster_.dir() + "/policy.yaml"});
    cluster_.StartAgent("node1", SmallBoards(2, 4, 1000, 4));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
    std::ofstream(cluster_.dir() + "/secret.yaml") << R"(name: secret
time_limit: 10m
task:
  command: /bin/sleep
  args: ["600"]
  env: {API_TOKEN: s3cret-value}
  resources: {cores: 1, ksps: 10, streams: 1}
)";
    std::ofstream(cluster_.dir() + "/to-lab-b.yaml") << R"(name: elsewhere
tenant: lab-b
time_limit: 10m
task:
  command: /bin/true
  resources: {cores: 1, ksps: 10, streams: 1}
)";
  }

  CliRun As(const std::string& user, std::vector<std::string> args) {
    return cluster_.RunSnnctlAs(user, args);
  }

  // Everything a refused action could have changed: jobs, policy, nodes and drains.
  std::string State() {
    std::string out;
    auto jobs = cluster_.ListAll();
    EXPECT_TRUE(jobs.ok());
    for (const auto& j : jobs->jobs()) {
      out += j.tenant() + "/" + std::to_string(j.tenant_job_id()) + ":" +
             v1::JobState_Name(j.state()) + ":" + std::to_string(j.spec().task().env_size()) + ";";
    }
    auto policy = cluster_.Client()->Call(rpc::kPolicyGet, v1::PolicyGetRequest());
    EXPECT_TRUE(policy.ok());
    out += policy->config().SerializeAsString();
    auto pool = cluster_.Pool();
    EXPECT_TRUE(pool.ok());
    for (const auto& n : pool->nodes()) {
      out += n.name() + n.state();
      for (const auto& b : n.boards())
        out += b.state() + std::to_string(b.info().dead_cores_size());
    }
    return out;
  }

  // `user` runs `args`: refused with one line that names `right`, and nothing changes.
  void ExpectRefused(const std::string& user, const std::vector<std::string>& args,
                     const std::string& right) {
    const std::string before = State();
    CliRun run = As(user, args);
    std::string command;
    for (const auto& a : args) command += a + " ";
    EXPECT_EQ(run.exit_code, 1) << user << ": " << command << run.out << run.err;
    EXPECT_NE(run.err.find(right), std::string::npos) << user << ": " << command << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(State(), before) << user << " changed something with " << command;
  }

  v1::JobState StateOf(const std::string& tenant, uint64_t id) {
    v1::ShowJobRequest show;
    show.mutable_job()->set_tenant_job_id(id);
    auto r = cluster_.Client("root", tenant)->Call(rpc::kJobShow, show);
    return r.ok() ? r->job().state() : v1::JOB_STATE_UNSPECIFIED;
  }

  // The first job: daemon's, in lab-a, with a secret in its env.
  void SubmitSecretJob() {
    CliRun run = As("daemon", {"--tenant", "lab-a", "submit", cluster_.dir() + "/secret.yaml"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    ASSERT_NE(run.out.find("Submitted job 1 (tenant lab-a)"), std::string::npos) << run.out;
  }

  TestCluster cluster_;
};

TEST_F(AuthorizationTest, TenantsAreTheirMembersOnly) {
  SubmitSecretJob();
  // Not a member: cannot submit to, list, show or cancel in lab-a, nor charge it with a job file.
  ExpectRefused("sys", {"--tenant", "lab-a", "submit", cluster_.dir() + "/secret.yaml"},
                "may not act for tenant 'lab-a'");
  ExpectRefused("daemon", {"submit", cluster_.dir() + "/to-lab-b.yaml"},
                "may not act for tenant 'lab-b'");
  ExpectRefused("sys", {"--tenant", "lab-a", "jobs"}, "needs membership or the reader role");
  ExpectRefused("sys", {"--tenant", "lab-a", "show", "1"}, "needs membership or the reader role");
  ExpectRefused("sys", {"--tenant", "lab-a", "cancel", "1"}, "needs membership or the reader role");
  ExpectRefused("sys", {"jobs", "--all-tenants"}, "needs the reader role");
  ExpectRefused("nobody", {"submit", cluster_.dir() + "/secret.yaml"}, "belongs to no tenant");
  // Each refusal is in the master's log with the caller's uid.
  auto log = ReadWholeFile(cluster_.dir() + "/master.log", "master log");
  ASSERT_TRUE(log.ok());
  EXPECT_NE(log->find("refused job.list to uid 3 (sys)"), std::string::npos);
  EXPECT_NE(log->find("refused job.submit to uid 1 (daemon)"), std::string::npos);
  // The job file's own tenant is used when the user belongs to it: sys may run in lab-b.
  CliRun own = As("sys", {"submit", cluster_.dir() + "/to-lab-b.yaml"});
  EXPECT_EQ(own.exit_code, 0) << own.err;
  EXPECT_NE(own.out.find("(tenant lab-b)"), std::string::npos) << own.out;
}

TEST_F(AuthorizationTest, OnlyOwnersCoordinatorsAndAdminsCancelAndSeeTheEnv) {
  SubmitSecretJob();
  // A fellow member sees the job, not its secret, and cannot cancel it.
  CliRun seen = As("lp", {"--tenant", "lab-a", "-o", "json", "show", "1"});
  ASSERT_EQ(seen.exit_code, 0) << seen.err;
  EXPECT_EQ(seen.out.find("s3cret-value"), std::string::npos) << seen.out;
  CliRun listed = As("lp", {"--tenant", "lab-a", "-o", "json", "jobs"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("secret"), std::string::npos);
  EXPECT_EQ(listed.out.find("s3cret-value"), std::string::npos) << listed.out;
  ExpectRefused("lp", {"--tenant", "lab-a", "cancel", "1"}, "needs to be its owner");
  // The reader sees every tenant's jobs, without secrets; it cancels nothing.
  CliRun all = As("man", {"-o", "json", "jobs", "--all-tenants"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("lab-a"), std::string::npos);
  EXPECT_EQ(all.out.find("s3cret-value"), std::string::npos) << all.out;
  ExpectRefused("man", {"--tenant", "lab-a", "cancel", "1"}, "needs to be its owner");
  // The owner and the coordinator see the secret.
  for (const std::string user : {"daemon", "bin"}) {
    CliRun mine = As(user, {"--tenant", "lab-a", "-o", "json", "show", "1"});
    ASSERT_EQ(mine.exit_code, 0) << user << ": " << mine.err;
    EXPECT_NE(mine.out.find("s3cret-value"), std::string::npos) << user << ": " << mine.out;
  }
  // The coordinator cancels a member's job; the owner cancels its own.
  CliRun cancelled = As("bin", {"--tenant", "lab-a", "cancel", "1"});
  EXPECT_EQ(cancelled.exit_code, 0) << cancelled.err;
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return StateOf("lab-a", 1) == v1::CANCELLED; }));
  CliRun again = As("daemon", {"--tenant", "lab-a", "submit", cluster_.dir() + "/secret.yaml"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  CliRun own = As("daemon", {"--tenant", "lab-a", "cancel", "2"});
  EXPECT_EQ(own.exit_code, 0) << own.err;
  auto job = cluster_.Client("root", "lab-a");
  v1::ShowJobRequest show;
  show.mutable_job()->set_tenant_job_id(1);
  auto first = job->Call(rpc::kJobShow, show);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_NE(first->job().reason().find("cancelled by bin"), std::string::npos)
      << first->job().reason();
}

TEST_F(AuthorizationTest, AdminAndOperatorCommandsNeedTheirRoles) {
  const std::string node1 = "node1";
  // Users may do none of the admin or operator commands.
  ExpectRefused("daemon", {"queue", "set", "default", "--priority", "5"}, "needs the admin role");
  ExpectRefused("daemon", {"tenant", "set", "lab-a", "--weight", "9"}, "needs the admin role");
  ExpectRefused("daemon", {"node", "drain", node1}, "needs the operator role");
  ExpectRefused("daemon", {"node", "resume", node1}, "needs the operator role");
  ExpectRefused("daemon", {"board", "drain", node1 + "/0"}, "needs the operator role");
  ExpectRefused("daemon", {"sim", "kill-core", node1 + "/0", "1,1"}, "needs the operator role");
  ExpectRefused("daemon", {"sim", "fail-board", node1 + "/1"}, "needs the operator role");
  ExpectRefused("daemon", {"node", "token", "node9"}, "needs the admin role");
  auto log = ReadWholeFile(cluster_.dir() + "/master.log", "master log");
  ASSERT_TRUE(log.ok());
  EXPECT_NE(log->find("refused admin.drain to uid 1 (daemon)"), std::string::npos);
  ExpectRefused("daemon", {"tenant", "add-user", "lab-a", "sys"}, "coordinator or an admin");
  ExpectRefused("man", {"node", "drain", node1}, "needs the operator role");
  // The operator drains, resumes and injects faults; policy and tokens stay the admin's.
  ExpectRefused("games", {"queue", "set", "default", "--priority", "5"}, "needs the admin role");
  ExpectRefused("games", {"node", "token", "node9"}, "needs the admin role");
  CliRun drained = As("games", {"node", "drain", node1, "--reason", "maintenance"});
  EXPECT_EQ(drained.exit_code, 0) << drained.err;
  CliRun resumed = As("games", {"node", "resume", node1});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  CliRun killed = As("games", {"sim", "kill-core", node1 + "/0", "1,1"});
  EXPECT_EQ(killed.exit_code, 0) << killed.err;
  // The coordinator manages lab-a's members; the admin everything.
  CliRun added = As("bin", {"tenant", "add-user", "lab-a", "sys"});
  EXPECT_EQ(added.exit_code, 0) << added.err;
  EXPECT_EQ(As("sys", {"--tenant", "lab-a", "jobs"}).exit_code, 0);
  CliRun set = cluster_.Snnctl({"queue", "set", "default", "--priority", "5"});
  EXPECT_EQ(set.exit_code, 0) << set.err;
  // A node's inventory is the admin's word: with the token, or approved before; never the
  // node's own first registration (a fresh node declaring a 256x256 board was believed).
  CliRun unapproved = cluster_.Snnctl({"node", "token", "node9", "--parsable"});
  EXPECT_EQ(unapproved.exit_code, 1);
  EXPECT_NE(unapproved.err.find("node node9 has no approved inventory: give its boards with the "
                                "token (snnctl node token node9 --boards FILE"),
            std::string::npos)
      << unapproved.err;
  const std::string boards = cluster_.dir() + "/node9.boards.yaml";
  std::ofstream(boards) << SmallBoards();
  CliRun token = cluster_.Snnctl({"node", "token", "node9", "--parsable", "--boards", boards});
  EXPECT_EQ(token.exit_code, 0) << token.err;
  EXPECT_EQ(token.out.rfind("snnjoin.", 0), 0u) << token.out;
}

// A client that reaches the master's port but holds no certificate for node1 (none at all, or
// node2's): it cannot register as node1, heartbeat or report for it, and so never receives its
// launches. node2, with its own certificate, cannot report about node1's tasks.
TEST_F(AuthorizationTest, ImpostorNodesAreRefused) {
  SubmitSecretJob();
  auto running = [&] {
    auto c = cluster_.Client("root", "lab-a");
    v1::ShowJobRequest show;
    show.mutable_job()->set_tenant_job_id(1);
    auto r = c->Call(rpc::kJobShow, show);
    return r.ok() && r->job().state() == v1::RUNNING ? r->job() : v1::JobRecord();
  };
  // Until node1's agent confirms the launch, the task is LAUNCHING: wait for it to run, so that
  // what is checked at the end is that the impostors changed nothing.
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    const v1::JobRecord j = running();
    return j.tasks_size() > 0 && j.tasks(0).state() == v1::TASK_RUNNING;
  }));
  const v1::JobRecord job = running();
  ASSERT_EQ(job.tasks(0).node(), "node1");

  v1::RegisterRequest as_node1;
  as_node1.mutable_node()->set_name("node1");
  as_node1.mutable_node()->add_pools("default");
  auto* board = as_node1.mutable_node()->add_boards();
  board->set_type("sim-v1");
  board->set_width(256);
  board->set_height(256);
  board->set_ksps(100000000);
  board->set_streams(64);
  v1::TaskStatusReport finished;
  auto* status = finished.add_tasks();
  status->set_job_id(job.id());
  status->set_index(0);
  status->set_attempt(job.attempt());
  status->set_state(v1::TASK_EXITED);
  v1::HeartbeatRequest heartbeat;
  heartbeat.set_node("node1");
  auto* usage = heartbeat.add_usage();
  usage->set_job_id(job.id());
  usage->set_index(0);
  usage->set_attempt(job.attempt());
  usage->mutable_usage()->set_injected(1000000000000000ull);

  // 1. A user's client (TLS, MUNGE as root, an admin): a user is not a node.
  auto user = cluster_.Client("root");
  EXPECT_EQ(user->Call(rpc::kNodeRegister, as_node1).status().code(), Code::kPermissionDenied);
  EXPECT_FALSE(user->Call(rpc::kNodeTaskStatus, finished).ok());
  EXPECT_FALSE(user->Call(rpc::kNodeHeartbeat, heartbeat).ok());

  // 2. node2's certificate: it is node2, not node1.
  const std::string node2_dir = cluster_.auth().AgentFlags("node2")[0].substr(10);
  RpcClient node2(std::chrono::milliseconds(5000));
  node2.set_tls(
      *MakeClientTls({node2_dir + "/ca.crt", node2_dir + "/node.pem", node2_dir + "/node.pem"}));
  ASSERT_TRUE(node2.Connect(HostPort{"127.0.0.1", cluster_.master_port()}).ok());
  auto reg = node2.Call(rpc::kNodeRegister, as_node1);
  EXPECT_EQ(reg.status().code(), Code::kPermissionDenied) << reg.status().ToString();
  EXPECT_NE(reg.status().message().find("needs that node's certificate"), std::string::npos);
  EXPECT_FALSE(node2.Call(rpc::kNodeHeartbeat, heartbeat).ok());
  EXPECT_FALSE(node2.Call(rpc::kJobSubmit, v1::SubmitRequest()).ok());
  // Registered as itself, it still cannot end or charge node1's task.
  v1::RegisterRequest as_node2 = as_node1;
  as_node2.mutable_node()->set_name("node2");
  as_node2.mutable_node()->mutable_boards(0)->set_width(4);
  as_node2.mutable_node()->mutable_boards(0)->set_height(4);
  as_node2.mutable_node()->mutable_boards(0)->set_ksps(1000);
  as_node2.mutable_node()->mutable_boards(0)->set_streams(4);
  // What a node may declare is what an operator approved (issue 34: any holder of a node
  // certificate declared a 256x256 board of 10^9 KSPS and was sent other tenants' jobs).
  auto unapproved = node2.Call(rpc::kNodeRegister, as_node2);
  EXPECT_EQ(unapproved.status().code(), Code::kPermissionDenied) << unapproved.status().ToString();
  EXPECT_NE(unapproved.status().message().find("node node2 has no approved inventory: approve "
                                               "what it may declare with snnctl node add node2"),
            std::string::npos)
      << unapproved.status().message();
  v1::NodeAddRequest approve;
  approve.set_node("node2");
  *approve.mutable_boards() = as_node2.node().boards();
  ASSERT_TRUE(cluster_.Client("root")->Call(rpc::kNodeAdd, approve).ok());
  v1::RegisterRequest inflated = as_node2;
  inflated.mutable_node()->mutable_boards(0)->set_width(256);
  inflated.mutable_node()->mutable_boards(0)->set_height(256);
  inflated.mutable_node()->mutable_boards(0)->set_ksps(1000000000);
  auto too_big = node2.Call(rpc::kNodeRegister, inflated);
  EXPECT_EQ(too_big.status().code(), Code::kPermissionDenied) << too_big.status().ToString();
  EXPECT_NE(too_big.status().message().find("board 0 declares a 256x256 mesh; 4x4 was approved"),
            std::string::npos)
      << too_big.status().message();
  inflated = as_node2;
  *inflated.mutable_node()->add_boards() = as_node2.node().boards(0);
  inflated.mutable_node()->mutable_boards(1)->set_index(1);
  too_big = node2.Call(rpc::kNodeRegister, inflated);
  EXPECT_NE(too_big.status().message().find("declares 2 boards; at most 1 approved"),
            std::string::npos)
      << too_big.status().message();
  ASSERT_TRUE(node2.Call(rpc::kNodeRegister, as_node2).ok());
  EXPECT_TRUE(node2.Call(rpc::kNodeTaskStatus, finished).ok());
  heartbeat.set_node("node2");
  EXPECT_TRUE(node2.Call(rpc::kNodeHeartbeat, heartbeat).ok());

  // 3. A certificate from another CA does not even get a TLS session.
  const std::string other = cluster_.dir() + "/other-ca";
  std::filesystem::create_directories(other);
  auto other_ca = pki::NewCa("rogue", 3600);
  ASSERT_TRUE(other_ca.ok());
  auto rogue = pki::IssueWithNewKey(*other_ca, {"node1", pki::kRoleNode, 3600, {}});
  ASSERT_TRUE(rogue.ok());
  ASSERT_TRUE(WriteFileAtomic(other + "/node.pem", rogue->cert_pem + rogue->key_pem, 0600).ok());
  RpcClient forged(std::chrono::milliseconds(5000));
  forged.set_tls(
      *MakeClientTls({cluster_.auth().ca_file(), other + "/node.pem", other + "/node.pem"}));
  Status connected = forged.Connect(HostPort{"127.0.0.1", cluster_.master_port()});
  if (connected.ok()) {  // TLS 1.3 may report the refused client certificate on the first read
    EXPECT_FALSE(forged.Call(rpc::kNodeRegister, as_node1).ok());
  }

  // node1's job runs on, on node1, uncharged; node1 is still the real agent.
  const v1::JobRecord after = running();
  EXPECT_EQ(after.state(), v1::RUNNING);
  EXPECT_EQ(after.tasks(0).node(), "node1");
  EXPECT_EQ(after.tasks(0).state(), v1::TASK_RUNNING);
  EXPECT_LT(after.usage().injected(), 1000000000000000ull);
  auto pool = cluster_.Pool();
  ASSERT_TRUE(pool.ok());
  for (const auto& n : pool->nodes()) {
    if (n.name() == "node1") {
      EXPECT_EQ(n.boards(0).info().width(), 4u);
    }
  }
  // New work still goes to the real node1 and completes there.
  auto second = cluster_.Submit(ShellJob("exit 0"), "lab-b");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  auto done = [&] {
    auto c = cluster_.Client("root", "lab-b");
    v1::ShowJobRequest show;
    show.mutable_job()->set_tenant_job_id(second->tenant_job_id());
    auto r = c->Call(rpc::kJobShow, show);
    return r.ok() && r->job().state() == v1::COMPLETED && r->job().tasks(0).node() == "node1";
  };
  EXPECT_TRUE(TestCluster::WaitUntil(done));
}

// MUNGE: a forged credential, one made with another key, and a replayed one are refused; an
// absent munged is one clear line.
TEST_F(AuthorizationTest, ForgedAndReplayedCredentialsAreRefused) {
  auto call_with = [&](const std::string& credential) {
    RpcClient c(std::chrono::milliseconds(5000));
    c.set_tls(*MakeClientTls({cluster_.auth().ca_file(), "", ""}));
    EXPECT_TRUE(c.Connect(HostPort{"127.0.0.1", cluster_.master_port()}).ok());
    v1::Credential cred;
    cred.set_munge(credential);
    c.set_credential(cred);
    return c.Call(rpc::kPoolStatus, v1::PoolStatusRequest()).status();
  };
  const Status forged = call_with("MUNGE:AwQFAAC5Zm9yZ2VkIGNyZWRlbnRpYWwgYnkgYW4gYXR0YWNrZXI=:");
  EXPECT_EQ(forged.code(), Code::kUnauthenticated) << forged.ToString();
  EXPECT_NE(forged.message().find("not valid"), std::string::npos) << forged.message();

  AuthKit other(cluster_.dir() + "/other-munge");  // another munged with another key
  ASSERT_TRUE(other.status().ok()) << other.status().ToString();
  auto foreign = MungeEncode(other.munge_socket());
  ASSERT_TRUE(foreign.ok());
  const Status wrong_key = call_with(*foreign);
  EXPECT_EQ(wrong_key.code(), Code::kUnauthenticated) << wrong_key.ToString();

  // Made with the right key, for another service (Slurm's, or `munge` by hand): not for snn.
  for (const std::string& payload : {std::string(), std::string("slurm")}) {
    const std::string file = cluster_.dir() + "/other-service.cred";
    std::filesystem::remove(file);
    std::vector<std::string> encode = {"/usr/bin/munge", "--socket", cluster_.auth().munge_socket(),
                                       "--output", file};
    if (payload.empty()) {
      encode.push_back("--no-input");
    } else {
      encode.insert(encode.end(), {"--string", payload});
    }
    const pid_t munge = SpawnLogged(encode, "/dev/null", cluster_.dir() + "/munge.err");
    ASSERT_GT(munge, 0);
    int status = -1;
    ASSERT_EQ(waitpid(munge, &status, 0), munge);
    ASSERT_EQ(status, 0) << ReadFile(cluster_.dir() + "/munge.err");
    std::string cred = ReadFile(file);
    while (!cred.empty() && cred.back() == '\n') cred.pop_back();
    const Status other_service = call_with(cred);
    EXPECT_EQ(other_service.code(), Code::kUnauthenticated) << other_service.ToString();
    EXPECT_NE(other_service.message().find("not made for snn"), std::string::npos)
        << other_service.message();
  }

  auto good = MungeEncode(cluster_.auth().munge_socket());
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE(call_with(*good).ok());
  const Status replayed = call_with(*good);  // the same credential on another connection
  EXPECT_EQ(replayed.code(), Code::kUnauthenticated) << replayed.ToString();
  EXPECT_NE(replayed.message().find("replayed"), std::string::npos) << replayed.message();

  CliRun absent = cluster_.Snnctl({"--munge-socket", "/nonexistent/munge.socket", "jobs"});
  EXPECT_EQ(absent.exit_code, 1);
  EXPECT_NE(absent.err.find("cannot reach munged at /nonexistent/munge.socket"), std::string::npos)
      << absent.err;
  EXPECT_EQ(std::count(absent.err.begin(), absent.err.end(), '\n'), 1) << absent.err;
}

// The master checks its munged at start, and does not start without one (it said nothing, and
// users were then told "cannot reach munged at <the master's socket>" and checked their own).
// One that fails later is named to users as the master's fault.
TEST_F(AuthorizationTest, AMastersMungedThatFailsIsNamedAsTheMastersFault) {
  const std::string dir = cluster_.dir() + "/nomunge";
  std::filesystem::create_directories(dir);
  std::vector<std::string> argv = {SNN_MASTER_BIN, "--listen=127.0.0.1:0",
                                   "--data_dir=" + dir + "/data",
                                   "--http_listen=", "--metrics_listen="};
  for (const auto& f : cluster_.auth().MasterFlags()) argv.push_back(f);
  argv.push_back("--munge_socket=/nonexistent/munge.socket");
  Daemon lonely(argv, dir + "/master.log");
  ASSERT_TRUE(lonely.WaitExit(20000)) << "a master without munged kept running";
  const std::string log = ReadFile(dir + "/master.log");
  EXPECT_NE(log.find("the master's munged does not work: cannot reach munged at "
                     "/nonexistent/munge.socket"),
            std::string::npos)
      << log;

  // A master whose munged goes away after it started (its socket here: a link to the one the
  // users' snnctl keeps using).
  const std::string link = cluster_.dir() + "/master-munge.socket";
  std::filesystem::create_symlink(cluster_.auth().munge_socket(), link);
  cluster_.StopMaster();
  cluster_.StartMaster(
      {"--policy_file=" + cluster_.dir() + "/policy.yaml", "--munge_socket=" + link});
  ASSERT_EQ(cluster_.Snnctl({"jobs"}).exit_code, 0);
  std::filesystem::remove(link);
  CliRun run = cluster_.Snnctl({"jobs"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("the master cannot check your credential: its own munged fails"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("your host is not at fault"), std::string::npos) << run.err;
}

// A node without a certificate enrols with a one-time token, and only once; a token names one
// node; the master's certificate is checked by clients.
TEST_F(AuthorizationTest, NodesEnrolWithOneTimeTokens) {
  std::ofstream(cluster_.dir() + "/small.yaml") << SmallBoards();
  const std::string small = cluster_.dir() + "/small.yaml";
  CliRun token =
      cluster_.Snnctl({"node", "token", "node7", "--ttl", "5m", "--parsable", "--boards", small});
  ASSERT_EQ(token.exit_code, 0) << token.err;
  std::string secret = token.out.substr(0, token.out.find('\n'));
  const std::string tls = cluster_.dir() + "/node7.own-tls";
  std::filesystem::create_directories(tls);
  std::filesystem::copy_file(cluster_.auth().ca_file(), tls + "/ca.crt");
  std::ofstream(cluster_.dir() + "/node7.token") << secret << "\n";
  cluster_.StartAgent("node7", SmallBoards(),
                      {"--tls_dir=" + tls, "--join_token_file=" + cluster_.dir() + "/node7.token"});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; }));
  auto pem = ReadWholeFile(tls + "/node.pem", "node.pem");
  ASSERT_TRUE(pem.ok());
  auto info = pki::ReadCert(*pem);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->common_name, "node7");
  EXPECT_EQ(info->role, "node");
  EXPECT_EQ(std::filesystem::status(tls + "/node.pem").permissions() &
                std::filesystem::perms::others_read,
            std::filesystem::perms::none);

  // The token is used up: a second node cannot enrol with it, nor with a token for another name.
  RpcClient fresh(std::chrono::milliseconds(5000));
  fresh.set_tls(*MakeClientTls({cluster_.auth().ca_file(), "", ""}));
  ASSERT_TRUE(fresh.Connect(HostPort{"127.0.0.1", cluster_.master_port()}).ok());
  auto key = pki::NewPrivateKey();
  ASSERT_TRUE(key.ok());
  v1::EnrolRequest enrol;
  enrol.set_token(secret);
  enrol.set_node("node7");
  enrol.set_csr_pem(*pki::NewCsr(*key, "node7"));
  auto reused = fresh.Call(rpc::kNodeEnrol, enrol);
  EXPECT_EQ(reused.status().code(), Code::kUnauthenticated) << reused.status().ToString();
  CliRun other = cluster_.Snnctl({"node", "token", "node8", "--parsable", "--boards", small});
  ASSERT_EQ(other.exit_code, 0);
  enrol.set_token(other.out.substr(0, other.out.find('\n')));
  auto misnamed = fresh.Call(rpc::kNodeEnrol, enrol);
  EXPECT_EQ(misnamed.status().code(), Code::kPermissionDenied) << misnamed.status().ToString();
  // An enrolled node's certificate does not let it pose as the master to clients.
  EXPECT_EQ(info->role, "node");
}

// A node enrolled with a join token may declare what was approved with it, no more. `snnctl node
// revoke` shuts out every certificate of the node, copies included, live sessions too, until it
// enrols again with a new token (issue 34: a copy of a node's certificate renewed itself elsewhere,
// and nothing could be revoked).
TEST_F(AuthorizationTest, ARevokedNodeIsShutOutCopiesIncludedUntilItEnrolsAgain) {
  cluster_.set_approve_agents(false);  // the join token's inventory is the only approval
  const std::string tls = cluster_.dir() + "/node7.own-tls";
  std::filesystem::create_directories(tls);
  std::filesystem::copy_file(cluster_.auth().ca_file(), tls + "/ca.crt");
  std::ofstream(cluster_.dir() + "/node7.small.yaml") << SmallBoards(1, 4, 1000, 4);
  auto enrol_with_new_token = [&] {
    CliRun token = cluster_.Snnctl(
        {"node", "token", "node7", "--parsable", "--boards", cluster_.dir() + "/node7.small.yaml"});
    ASSERT_EQ(token.exit_code, 0) << token.err;
    std::ofstream(cluster_.dir() + "/node7.token") << token.out;
    std::filesystem::remove(tls + "/node.pem");
    cluster_.StartAgent(
        "node7", SmallBoards(1, 4, 1000, 4),
        {"--tls_dir=" + tls, "--join_token_file=" + cluster_.dir() + "/node7.token"});
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; }));
  };
  enrol_with_new_token();

  // A thief with a copy of node7's certificate and key.
  std::filesystem::copy_file(tls + "/node.pem", cluster_.dir() + "/stolen.pem");
  auto thief = [&] {
    auto c = std::make_unique<RpcClient>(std::chrono::milliseconds(5000));
    const std::string pem = cluster_.dir() + "/stolen.pem";
    c->set_tls(*MakeClientTls({cluster_.auth().ca_file(), pem, pem}));
    EXPECT_TRUE(c->Connect(HostPort{"127.0.0.1", cluster_.master_port()}).ok());
    return c;
  };
  v1::RegisterRequest bigger;
  bigger.mutable_node()->set_name("node7");
  bigger.mutable_node()->add_pools("default");
  v1::BoardInfo* board = bigger.mutable_node()->add_boards();
  board->set_type("sim-v1");
  board->set_width(64);
  board->set_height(64);
  board->set_neurons_per_core(256);
  board->set_ksps(1000000);
  board->set_streams(64);
  auto refused = thief()->Call(rpc::kNodeRegister, bigger);
  EXPECT_EQ(refused.status().code(), Code::kPermissionDenied) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("board 0 declares a 64x64 mesh; 4x4 was approved"),
            std::string::npos)
      << refused.status().message();

  // An admin approves a bigger inventory with snnctl, from the node's boards file; a user may not.
  std::ofstream(cluster_.dir() + "/node7.boards.yaml")
      << "boards:\n  - {type: sim-v1, mesh: 64x64, ksps: 1000000, streams: 64}\n";
  CliRun add_as_user = cluster_.RunSnnctlAs(
      "daemon", {"node", "add", "node7", "--boards", cluster_.dir() + "/node7.boards.yaml"});
  EXPECT_NE(add_as_user.exit_code, 0) << add_as_user.out;
  CliRun add = cluster_.Snnctl({"node", "add", "node7", "--boards",
                                cluster_.dir() + "/node7.boards.yaml", "--pools", "default"});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_NE(add.out.find("Node node7 may declare 1 boards:\n  board 0: sim-v1 64x64, 1000000 "
                         "KSPS, 64 streams\n  pools: default\n"),
            std::string::npos)
      << add.out;
  CliRun bad = cluster_.Snnctl({"node", "add", "node7", "--boards", "/nonexistent.yaml"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  EXPECT_TRUE(thief()->Call(rpc::kNodeRegister, bigger).ok()) << "now approved";

  // Revoked: the live session ends, the copy is refused, renewing is refused.
  CliRun plain = cluster_.RunSnnctlAs("daemon", {"node", "revoke", "node7"});
  EXPECT_NE(plain.exit_code, 0) << "a user may not revoke nodes";
  CliRun revoke = cluster_.Snnctl({"node", "revoke", "node7"});
  ASSERT_EQ(revoke.exit_code, 0) << revoke.err;
  EXPECT_NE(revoke.out.find("Revoked every certificate of node node7"), std::string::npos);
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  v1::HeartbeatRequest heartbeat;
  heartbeat.set_node("node7");
  auto copy = thief()->Call(rpc::kNodeHeartbeat, heartbeat);
  EXPECT_EQ(copy.status().code(), Code::kUnauthenticated) << copy.status().ToString();
  EXPECT_NE(copy.status().message().find("the certificate of node node7 was revoked"),
            std::string::npos)
      << copy.status().message();
  auto key = pki::NewPrivateKey();
  v1::RenewRequest renew;
  renew.set_csr_pem(*pki::NewCsr(*key, "node7"));
  EXPECT_EQ(thief()->Call(rpc::kNodeRenew, renew).status().code(), Code::kUnauthenticated);

  // A new token: the node enrols again, in the next generation; the old copy stays refused,
  // also after the master restarts.
  cluster_.StopAgent("node7");
  enrol_with_new_token();
  EXPECT_EQ(thief()->Call(rpc::kNodeHeartbeat, heartbeat).status().code(), Code::kUnauthenticated);
  cluster_.StopMaster();
  cluster_.StartMaster({"--policy_file=" + cluster_.dir() + "/policy.yaml"});
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; }));
  EXPECT_EQ(thief()->Call(rpc::kNodeHeartbeat, heartbeat).status().code(), Code::kUnauthenticated);
}

// A revoked node enrols again by following the messages: its agent sets the revoked certificate
// aside and enrols with the token in its token file, read again, so a new token placed there is
// used without a restart (the agent kept presenting the revoked certificate, with a new token and
// after restarts; only deleting node.pem, in no doc, worked).
TEST_F(AuthorizationTest, ARevokedNodeEnrolsAgainWithANewTokenInItsTokenFile) {
  cluster_.set_approve_agents(false);
  const std::string tls = cluster_.dir() + "/node7.own-tls";
  std::filesystem::create_directories(tls);
  std::filesystem::copy_file(cluster_.auth().ca_file(), tls + "/ca.crt");
  const std::string boards = cluster_.dir() + "/node7.yaml";
  std::ofstream(boards) << SmallBoards(1, 4, 1000, 4);
  const std::string token_file = cluster_.dir() + "/node7.token";
  CliRun token = cluster_.Snnctl({"node", "token", "node7", "--parsable", "--boards", boards});
  ASSERT_EQ(token.exit_code, 0) << token.err;
  std::ofstream(token_file) << token.out;
  cluster_.StartAgent("node7", SmallBoards(1, 4, 1000, 4),
                      {"--tls_dir=" + tls, "--join_token_file=" + token_file});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; }));

  ASSERT_EQ(cluster_.Snnctl({"node", "revoke", "node7"}).exit_code, 0);
  const std::string log = cluster_.dir() + "/node7.log";
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    return std::filesystem::exists(tls + "/node.pem.revoked") &&
           ReadFile(log).find("unknown, used or expired") != std::string::npos;
  })) << ReadFile(log);
  EXPECT_EQ(cluster_.NodesUp(), 1);
  // What the agent's log says to do: a new token, in the same file.
  EXPECT_NE(ReadFile(log).find("the certificate is set aside"), std::string::npos) << ReadFile(log);
  CliRun again = cluster_.Snnctl({"node", "token", "node7", "--parsable"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  std::ofstream(token_file) << again.out;
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; })) << ReadFile(log);
  EXPECT_TRUE(std::filesystem::exists(tls + "/node.pem"));
}

}  // namespace
}  // namespace snn::testing
