// The HTTP API on real daemons (docs/reference/http-api.md): every snnctl operation answers the
// same over HTTP as snnctl -o json prints; every refusal the RPC makes, HTTP makes too, with the
// same one line; tokens act as their user only, and stop at revocation.
// The users are Debian's base system accounts, as in authorization_test.cc.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "cli/time_arg.h"
#include "common/base/clock.h"
#include "common/base/file_util.h"
#include "common/base/proto_json.h"
#include "proto/policy.pb.h"
#include "snn_paths.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/http_client.h"

namespace snn::testing {
namespace {

// daemon and lp: lab-a; bin: lab-a's coordinator; sys: lab-b; games: operator; man: reader;
// nobody: no tenant. root (this process) is an admin.
constexpr char kPolicy[] = R"(access:
  operators: {users: [games]}
  readers: {users: [man]}
  personal_tenants: false
tenants:
  - name: lab-a
    users: [daemon, lp]
    coordinators: [bin]
  - name: lab-b
    users: [sys, root]
)";

constexpr char kSleepJob[] = R"(name: sleeper
tenant: lab-a
time_limit: 10m
task:
  command: /bin/sleep
  args: ["600"]
  env: {API_TOKEN: s3cret-value}
  resources: {cores: 1, ksps: 10, streams: 1}
)";

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "runs snnctl as other users: needs root";
    std::ofstream(cluster_.dir() + "/policy.yaml") << kPolicy;
    std::ofstream(cluster_.dir() + "/sleep.yaml") << kSleepJob;
    http_port_ = cluster_.StartMasterWithApi({"--policy_file=" + cluster_.dir() + "/policy.yaml"});
    ASSERT_NE(http_port_, 0) << ReadFile(cluster_.dir() + "/master.log");
    cluster_.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  }

  // A new token of Unix user `user`, made with snnctl (MUNGE proves the user).
  std::string TokenOf(const std::string& user) {
    CliRun run = cluster_.RunSnnctlAs(user, {"token", "create", "--parsable", "--note", "test"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::string token = run.out;
    while (!token.empty() && token.back() == '\n') token.pop_back();
    return token;
  }

  HttpResult Http(const std::string& method, const std::string& target, const std::string& token,
                  const std::string& body = "", const std::string& tenant = "") {
    HttpCall call{method, target, token, body, {}};
    if (!tenant.empty()) call.headers["Snn-Tenant"] = tenant;
    auto result = HttpDo("127.0.0.1", http_port_, cluster_.auth().ca_file(), call);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : HttpResult{};
  }

  // Each snnctl command (-o json) and its route answer the same (snnctl follows the pages of
  // a listing, where HTTP gives one page and where the next starts; `now_ms`, and a report's
  // utilization up to now, are each read's own; show and policy show print the job and the
  // policy, not the answers that hold them).
  struct Pair {
    std::vector<std::string> snnctl;
    std::string target;
  };
  void ExpectSameAsSnnctl(const std::string& token, const std::vector<Pair>& pairs) {
    auto normalized = [](const std::string& text) {
      std::string out;
      size_t start = 0;
      while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        if (line.find("\"now_ms\"") == std::string::npos &&
            line.find("\"utilization\"") == std::string::npos &&
            line.find("\"next_after_id\"") == std::string::npos) {
          out += line + "\n";
        }
        start = end + 1;
      }
      return out;
    };
    for (const auto& pair : pairs) {
      std::vector<std::string> args = {"-o", "json"};
      args.insert(args.end(), pair.snnctl.begin(), pair.snnctl.end());
      std::string cli, http;
      // Both read the same state at some moment (a heartbeat may land between two reads).
      EXPECT_TRUE(TestCluster::WaitUntil([&] {
        CliRun run = cluster_.Snnctl(args, "lab-a");
        HttpResult r = Http("GET", pair.target, token, "", "lab-a");
        cli = normalized(run.exit_code == 0 ? run.out : run.err);
        http = r.body;
        if (pair.target == "/v1/policy") {
          v1::PolicyGetResponse policy;
          if (!FromJson(http, policy).ok()) return false;
          http = ToJson(policy.config()) + "\n";
        } else if (pair.target == "/v1/jobs/1") {
          v1::ShowJobResponse show;
          if (!FromJson(http, show).ok()) return false;
          http = ToJson(show.job()) + "\n";
        }
        http = normalized(http);
        return r.status == 200 && cli == http;
      })) << pair.target
          << "\nsnnctl:\n"
          << cli << "\nHTTP:\n"
          << http;
    }
  }

  TestCluster cluster_;
  uint16_t http_port_ = 0;
};

// The error line of an HTTP refusal, as snnctl would print it.
std::string ErrorLine(const HttpResult& r) {
  const std::string key = "\"error\": \"";
  const size_t at = r.body.find(key);
  if (at == std::string::npos) return "(no error in " + r.body + ")";
  const size_t end = r.body.find("\", \"code\"", at);
  return "snnctl: " + r.body.substr(at + key.size(), end - at - key.size()) + "\n";
}

TEST_F(HttpApiTest, EveryOperationAnswersAsSnnctlDoes) {
  const std::string token = TokenOf("root");
  // Submit the same job document snnctl reads; it runs.
  HttpResult submitted = Http("POST", "/v1/jobs", token, kSleepJob);
  ASSERT_EQ(submitted.status, 200) << submitted.body;
  EXPECT_NE(submitted.body.find("\"tenant_job_id\": \"1\""), std::string::npos) << submitted.body;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster_.Show(1, "lab-a");
    return job.ok() && job->state() == v1::RUNNING;
  }));
  ExpectSameAsSnnctl(token, {{{"jobs"}, "/v1/jobs"},
                             {{"jobs", "--state", "RUNNING"}, "/v1/jobs?states=RUNNING"},
                             {{"jobs", "--start"}, "/v1/jobs?states=PENDING&start=true"},
                             {{"show", "1"}, "/v1/jobs/1"},
                             {{"pool", "status"}, "/v1/pool"},
                             {{"policy", "show"}, "/v1/policy"},
                             {{"token", "list"}, "/v1/tokens"}});
  // A read carries an ETag; the same read with If-None-Match is 304 while nothing changed.
  HttpResult policy = Http("GET", "/v1/policy", token);
  ASSERT_EQ(policy.status, 200);
  ASSERT_FALSE(policy.headers["etag"].empty());
  HttpCall again{"GET", "/v1/policy", token, "", {{"If-None-Match", policy.headers["etag"]}}};
  auto unchanged = HttpDo("127.0.0.1", http_port_, cluster_.auth().ca_file(), again);
  ASSERT_TRUE(unchanged.ok());
  EXPECT_EQ(unchanged->status, 304) << unchanged->body;
  EXPECT_TRUE(unchanged->body.empty());
  // Logs, requeue, hold, release and cancel act as the commands do.
  HttpResult logs = Http("GET", "/v1/jobs/1/logs?task=0", token, "", "lab-a");
  EXPECT_EQ(logs.status, 200) << logs.body;
  HttpResult requeued = Http("POST", "/v1/jobs/1/requeue", token, "", "lab-a");
  EXPECT_EQ(requeued.status, 200) << requeued.body;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster_.Show(1, "lab-a");
    return job.ok() && job->state() == v1::RUNNING && job->attempt() == 2;
  }));
  HttpResult second = Http("POST", "/v1/jobs", token, kSleepJob);
  ASSERT_EQ(second.status, 200) << second.body;
  HttpResult cancelled = Http("POST", "/v1/jobs/1/cancel", token, "", "lab-a");
  EXPECT_EQ(cancelled.status, 200) << cancelled.body;
  EXPECT_TRUE(TestCluster::WaitUntil([&] {
    CliRun run = cluster_.Snnctl({"-o", "json", "show", "1"}, "lab-a");
    return run.out.find("\"CANCELLED\"") != std::string::npos;
  }));
  HttpResult cancelled2 = Http("POST", "/v1/jobs/2/cancel", token, "", "lab-a");
  EXPECT_EQ(cancelled2.status, 200) << cancelled2.body;
  EXPECT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster_.Show(2, "lab-a");
    return job.ok() && job->state() == v1::CANCELLED;
  }));
  // Accounting, once nothing runs (a running task's usage grows between two reads).
  const int64_t now = SystemClock().NowMs();
  const int64_t from = *ParseTimeArg("2020-01-01", now), to = *ParseTimeArg("2040-01-01", now);
  const std::string period = "from_ms=" + std::to_string(from) + "&to_ms=" + std::to_string(to);
  ExpectSameAsSnnctl(
      token, {{{"report", "--from", "2020-01-01", "--to", "2040-01-01"}, "/v1/report?" + period},
              {{"invoice", "--from", "2020-01-01", "--to", "2040-01-01"},
               "/v1/invoice?tenant=lab-a&" + period},
              {{"usage", "--since", "2020-01-01", "--until", "2040-01-01"}, "/v1/usage?" + period},
              {{"results", "1"}, "/v1/jobs/1/results"}});
  // Bad input: one line, nothing changed.
  HttpResult bad = Http("POST", "/v1/jobs", token, "name: x\ntask: {command: /bin/true}\n");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(bad.body.find("\"code\": \"INVALID_ARGUMENT\""), std::string::npos) << bad.body;
  EXPECT_EQ(Http("GET", "/v1/jobs/1?colour=red", token).status, 400);
  EXPECT_EQ(Http("GET", "/v1/nothing", token).status, 404);
  EXPECT_EQ(Http("PATCH", "/v1/jobs", token).status, 405);
  // The OpenAPI document is served to anyone.
  HttpResult doc = Http("GET", "/v1/openapi.json", "");
  EXPECT_EQ(doc.status, 200);
  EXPECT_NE(doc.body.find("\"openapi\": \"3.1.0\""), std::string::npos);
}

TEST_F(HttpApiTest, EveryRefusalOfTheRpcIsARefusalOverHttp) {
  CliRun submitted = cluster_.RunSnnctlAs(
      "daemon", {"--tenant", "lab-a", "submit", cluster_.dir() + "/sleep.yaml"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  std::ifstream file(cluster_.dir() + "/sleep.yaml");
  const std::string sleep_job((std::istreambuf_iterator<char>(file)), {});
  const std::string to_lab_b =
      "name: elsewhere\ntenant: lab-b\ntask:\n  command: /bin/true\n"
      "  resources: {cores: 1, ksps: 10, streams: 1}\n";
  std::ofstream(cluster_.dir() + "/to-lab-b.yaml") << to_lab_b;
  struct Case {
    std::string user;
    std::vector<std::string> snnctl;
    std::string method, target, body, tenant;
  };
  const std::vector<Case> cases = {
      {"sys", {"--tenant", "lab-a", "jobs"}, "GET", "/v1/jobs", "", "lab-a"},
      {"sys", {"--tenant", "lab-a", "show", "1"}, "GET", "/v1/jobs/1", "", "lab-a"},
      {"sys", {"--tenant", "lab-a", "cancel", "1"}, "POST", "/v1/jobs/1/cancel", "", "lab-a"},
      {"sys", {"jobs", "--all-tenants"}, "GET", "/v1/jobs?all_tenants=true", "", ""},
      {"lp", {"--tenant", "lab-a", "cancel", "1"}, "POST", "/v1/jobs/1/cancel", "", "lab-a"},
      {"man", {"--tenant", "lab-a", "cancel", "1"}, "POST", "/v1/jobs/1/cancel", "", "lab-a"},
      {"lp", {"--tenant", "lab-a", "hold", "1"}, "POST", "/v1/jobs/1/hold", "", "lab-a"},
      {"lp", {"--tenant", "lab-a", "requeue", "1"}, "POST", "/v1/jobs/1/requeue", "", "lab-a"},
      {"lp", {"--tenant", "lab-a", "logs", "1"}, "GET", "/v1/jobs/1/logs", "", "lab-a"},
      {"lp", {"--tenant", "lab-a", "results", "1"}, "GET", "/v1/jobs/1/results", "", "lab-a"},
      {"sys", {"--tenant", "lab-a", "results", "1"}, "GET", "/v1/jobs/1/results", "", "lab-a"},
      {"daemon", {"submit", cluster_.dir() + "/to-lab-b.yaml"}, "POST", "/v1/jobs", to_lab_b, ""},
      {"sys",
       {"--tenant", "lab-a", "submit", cluster_.dir() + "/sleep.yaml"},
       "POST",
       "/v1/jobs",
       sleep_job,
       "lab-a"},
      {"nobody", {"submit", cluster_.dir() + "/sleep.yaml"}, "POST", "/v1/jobs", sleep_job, ""},
      {"daemon", {"node", "drain", "node1"}, "POST", "/v1/nodes/node1/drain", "", ""},
      {"daemon", {"node", "resume", "node1"}, "POST", "/v1/nodes/node1/resume", "", ""},
      {"man", {"node", "drain", "node1"}, "POST", "/v1/nodes/node1/drain", "", ""},
      {"daemon",
       {"board", "mark", "node1/0", "x=1"},
       "POST",
       "/v1/nodes/node1/marks",
       "{\"board\": 0, \"set\": {\"x\": \"1\"}}",
       ""},
      {"daemon", {"node", "token", "node9"}, "POST", "/v1/nodes/node9/token", "", ""},
      {"games", {"node", "token", "node9"}, "POST", "/v1/nodes/node9/token", "", ""},
      {"daemon", {"node", "revoke", "node1"}, "POST", "/v1/nodes/node1/revoke", "", ""},
      {"daemon",
       {"tenant", "add-user", "lab-a", "sys"},
       "POST",
       "/v1/tenants/lab-a/members",
       "{\"add_users\": [\"sys\"]}",
       ""},
      {"daemon",
       {"tenant", "credit", "lab-a", "5"},
       "POST",
       "/v1/credits",
       "{\"tenant\": \"lab-a\", \"micros\": 5000000}",
       ""},
      {"sys", {"--tenant", "lab-a", "report"}, "GET", "/v1/report", "", "lab-a"},
      {"sys", {"--tenant", "lab-a", "usage"}, "GET", "/v1/usage", "", "lab-a"},
      {"sys", {"invoice", "lab-a"}, "GET", "/v1/invoice?tenant=lab-a", "", ""},
      {"sys", {"token", "list", "--user", "daemon"}, "GET", "/v1/tokens?user=daemon", "", ""},
      {"daemon",
       {"sim", "kill-core", "node1/0", "1,1"},
       "POST",
       "/v1/nodes/node1/faults",
       "{\"board\": 0, \"x\": 1, \"y\": 1}",
       ""},
  };
  std::map<std::string, std::string> tokens;
  for (const auto& c : cases) {
    if (!tokens.count(c.user)) tokens[c.user] = TokenOf(c.user);
  }
  auto jobs_now = [&] {
    auto all = cluster_.ListAll();
    std::string out;
    for (const auto& j : all->jobs()) {
      out += j.tenant() + "/" + std::to_string(j.tenant_job_id()) + v1::JobState_Name(j.state());
    }
    auto pool = cluster_.Pool();
    for (const auto& n : pool->nodes()) out += n.name() + n.state();
    return out;
  };
  const std::string before = jobs_now();
  for (const auto& c : cases) {
    std::string what = c.user + ": " + c.method + " " + c.target;
    CliRun cli = cluster_.RunSnnctlAs(c.user, c.snnctl);
    EXPECT_EQ(cli.exit_code, 1) << what << cli.out << cli.err;
    HttpResult http = Http(c.method, c.target, tokens[c.user], c.body, c.tenant);
    EXPECT_GE(http.status, 400) << what << http.body;
    EXPECT_LT(http.status, 500) << what << http.body;
    EXPECT_EQ(ErrorLine(http), cli.err) << what;
  }
  EXPECT_EQ(jobs_now(), before);
  // A token stands for its user only: sys cannot revoke daemon's token, nor read its job.
  CliRun listed = cluster_.RunSnnctlAs("daemon", {"-o", "json", "token", "list"});
  const size_t id_at = listed.out.find("\"id\": \"");
  ASSERT_NE(id_at, std::string::npos) << listed.out;
  const std::string daemon_id = listed.out.substr(id_at + 7, 16);
  EXPECT_EQ(Http("DELETE", "/v1/tokens/" + daemon_id, tokens["sys"]).status, 404);
  EXPECT_EQ(Http("GET", "/v1/jobs/1", tokens["daemon"], "", "lab-a").status, 200);
  // No token, a made-up one, a revoked one: 401, nothing served.
  EXPECT_EQ(Http("GET", "/v1/jobs", "").status, 401);
  EXPECT_EQ(Http("GET", "/v1/jobs", "snntok.0123").status, 401);
  CliRun revoked = cluster_.RunSnnctlAs("daemon", {"token", "revoke", daemon_id});
  EXPECT_EQ(revoked.exit_code, 0) << revoked.err;
  HttpResult after = Http("GET", "/v1/jobs/1", tokens["daemon"], "", "lab-a");
  EXPECT_EQ(after.status, 401) << after.body;
  EXPECT_NE(after.body.find("unknown or was revoked"), std::string::npos) << after.body;
  // A token cannot make tokens (only MUNGE can).
  HttpResult made = Http("POST", "/v1/tokens", tokens["sys"]);
  EXPECT_EQ(made.status, 403) << made.body;
  EXPECT_NE(made.body.find("a token cannot make tokens"), std::string::npos) << made.body;
}

// The revision of the last event in `text` that contains all of `parts` (0: none).
uint64_t RevOf(const std::string& text, const std::vector<std::string>& parts) {
  uint64_t rev = 0;
  size_t start = 0;
  while ((start = text.find("id: ", start)) != std::string::npos) {
    const size_t end = text.find("\n\n", start);
    if (end == std::string::npos) break;
    const std::string frame = text.substr(start, end - start);
    bool all = true;
    for (const auto& p : parts) all = all && frame.find(p) != std::string::npos;
    if (all) rev = std::stoull(frame.substr(4));
    start = end;
  }
  return rev;
}

TEST_F(HttpApiTest, WatchersSeeWhatTheyMayReadAsItHappensAndResume) {
  const std::string daemon = TokenOf("daemon"), sys = TokenOf("sys");
  const std::string ca = cluster_.auth().ca_file();
  auto daemon_events =
      HttpEventStream::Open("127.0.0.1", http_port_, ca, {"GET", "/v1/events", daemon, "", {}});
  ASSERT_TRUE(daemon_events.ok()) << daemon_events.status().ToString();
  auto sys_events =
      HttpEventStream::Open("127.0.0.1", http_port_, ca, {"GET", "/v1/events", sys, "", {}});
  ASSERT_TRUE(sys_events.ok()) << sys_events.status().ToString();
  // Both streams are open (the first comment arrived) before anything happens.
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    return (*daemon_events)->text().find(": snn events") != std::string::npos &&
           (*sys_events)->text().find(": snn events") != std::string::npos;
  }));
  EXPECT_NE((*daemon_events)->text().find("Content-Type: text/event-stream"), std::string::npos);
  const std::string quick =
      "name: quick\ntenant: lab-a\ntask:\n  command: /bin/true\n"
      "  resources: {cores: 1, ksps: 10, streams: 1}\n";
  ASSERT_EQ(Http("POST", "/v1/jobs", daemon, quick).status, 200);
  // daemon sees its job's transitions, in order, as they happen.
  uint64_t done = 0;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    done = RevOf((*daemon_events)->text(), {"\"name\":\"quick\"", "\"state\":\"COMPLETED\""});
    return done != 0;
  })) << (*daemon_events)->text();
  const std::string seen = (*daemon_events)->text();
  const uint64_t pending = RevOf(seen, {"\"name\":\"quick\"", "\"state\":\"PENDING\""});
  const uint64_t running = RevOf(seen, {"\"name\":\"quick\"", "\"state\":\"RUNNING\""});
  EXPECT_NE(pending, 0u) << seen;
  EXPECT_LT(pending, running) << seen;
  EXPECT_LT(running, done) << seen;
  // sys (lab-b) never sees lab-a's jobs: its own job's end comes after lab-a's in revision
  // order, and nothing of lab-a came before it.
  const std::string elsewhere =
      "name: mine\ntenant: lab-b\ntask:\n  command: /bin/true\n"
      "  resources: {cores: 1, ksps: 10, streams: 1}\n";
  ASSERT_EQ(Http("POST", "/v1/jobs", sys, elsewhere).status, 200);
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    return RevOf((*sys_events)->text(), {"\"name\":\"mine\"", "\"state\":\"COMPLETED\""}) > done;
  })) << (*sys_events)->text();
  EXPECT_EQ((*sys_events)->text().find("lab-a"), std::string::npos) << (*sys_events)->text();
  // Nodes and boards are everyone's to see: a drained board reaches both.
  CliRun drained = cluster_.Snnctl({"board", "drain", "node1/0", "--reason", "maintenance"});
  ASSERT_EQ(drained.exit_code, 0) << drained.err;
  for (auto* stream : {&*daemon_events, &*sys_events}) {
    EXPECT_TRUE(TestCluster::WaitUntil([&] {
      return RevOf((*stream)->text(), {"event: node", "DRAINED (maintenance)"}) != 0;
    })) << (*stream)->text();
  }
  // Resuming after `pending` replays what came after it; a revision this master never gave
  // gets a reset first.
  auto resumed = HttpEventStream::Open(
      "127.0.0.1", http_port_, ca,
      {"GET", "/v1/events?types=job", daemon, "", {{"Last-Event-ID", std::to_string(pending)}}});
  ASSERT_TRUE(resumed.ok());
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    return RevOf((*resumed)->text(), {"\"state\":\"COMPLETED\""}) == done;
  })) << (*resumed)->text();
  EXPECT_EQ(RevOf((*resumed)->text(), {"\"state\":\"PENDING\""}), 0u);
  EXPECT_EQ((*resumed)->text().find("event: node"), std::string::npos);
  auto stale = HttpEventStream::Open("127.0.0.1", http_port_, ca,
                                     {"GET", "/v1/events?since=5", daemon, "", {}});
  ASSERT_TRUE(stale.ok());
  ASSERT_TRUE(TestCluster::WaitUntil(
      [&] { return (*stale)->text().find("event: reset") != std::string::npos; }));
  // Bad parameters, and no token: one line, no stream.
  EXPECT_EQ(Http("GET", "/v1/events?since=x", daemon).status, 400);
  EXPECT_EQ(Http("GET", "/v1/events?types=weather", daemon).status, 400);
  EXPECT_EQ(Http("GET", "/v1/events", "").status, 401);
}

TEST_F(HttpApiTest, ALongPollAnswersWhenTheJobChanges) {
  const std::string token = TokenOf("daemon");
  ASSERT_EQ(Http("POST", "/v1/jobs", token, kSleepJob).status, 200);
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto job = cluster_.Show(1, "lab-a");
    return job.ok() && job->state() == v1::RUNNING && job->tasks_size() == 1 &&
           job->tasks(0).state() == v1::TASK_RUNNING;
  }));
  HttpResult now = Http("GET", "/v1/jobs/1", token, "", "lab-a");
  ASSERT_EQ(now.status, 200);
  const std::string etag = now.headers["etag"];
  // Nothing changes within the wait: 304.
  HttpCall poll{"GET", "/v1/jobs/1?wait=1s", token, "", {{"If-None-Match", etag}}};
  poll.headers["Snn-Tenant"] = "lab-a";
  auto quiet = HttpDo("127.0.0.1", http_port_, cluster_.auth().ca_file(), poll);
  ASSERT_TRUE(quiet.ok());
  EXPECT_EQ(quiet->status, 304) << quiet->body;
  // The job is cancelled while a poll waits (or before it arrives): it answers with the change.
  poll.target = "/v1/jobs/1?wait=5m";
  Result<HttpResult> changed = Unavailable("not yet");
  std::thread waiter(
      [&] { changed = HttpDo("127.0.0.1", http_port_, cluster_.auth().ca_file(), poll); });
  CliRun cancel = cluster_.RunSnnctlAs("daemon", {"--tenant", "lab-a", "cancel", "1"});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  waiter.join();
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_EQ(changed->status, 200);
  EXPECT_NE(changed->headers["etag"], etag);
  EXPECT_NE(changed->body.find("\"CANCELLED\""), std::string::npos) << changed->body;
  // wait= only where it means something, and within bounds.
  EXPECT_EQ(Http("GET", "/v1/jobs?wait=5s", token).status, 400);
  EXPECT_EQ(Http("GET", "/v1/jobs/1?wait=1h", token, "", "lab-a").status, 400);
}

// A token is a password: snnctl writes it for its user only, to --out's file or to a file the
// shell made for its standard output with a wider mode (the old snnctl left that one 0644).
TEST_F(HttpApiTest, TokensAreWrittenReadableByTheirUserOnly) {
  auto mode = [](const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 ? (st.st_mode & 0777) : 07777u;
  };
  const std::string out = cluster_.dir() + "/out.token";
  CliRun run = cluster_.Snnctl({"token", "create", "--out", out}, "lab-b");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "") << "the token went to standard output too";
  EXPECT_EQ(mode(out), 0600u);
  std::string token = ReadFile(out);
  while (!token.empty() && token.back() == '\n') token.pop_back();
  EXPECT_EQ(Http("GET", "/v1/pool", token).status, 200);

  const std::string redirected = cluster_.dir() + "/redirected.token";
  std::string command =
      "umask 022; '" + std::string(SNNCTL_BIN) + "' --master " + cluster_.master_address();
  for (const auto& flag : cluster_.auth().SnnctlFlags()) command += " '" + flag + "'";
  command += " --tenant lab-b token create --parsable > '" + redirected + "' 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  EXPECT_EQ(mode(redirected), 0600u);
  token = ReadFile(redirected);
  while (!token.empty() && token.back() == '\n') token.pop_back();
  EXPECT_EQ(Http("GET", "/v1/pool", token).status, 200);
}

}  // namespace
}  // namespace snn::testing
