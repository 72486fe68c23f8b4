// Bad input gets one clear line and changes nothing; daemons survive garbage from peers.
#include <google/protobuf/wrappers.pb.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/model/model.h"
#include "common/rpc/frame.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/raw_socket.h"

namespace snn::testing {
namespace {

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.StartMaster();
    cluster_.StartAgent("node1", SmallBoards(1, 4, 1000, 4));
    ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
    ASSERT_TRUE(cluster_.Submit(ShellJob("exit 0")).ok());
    ASSERT_TRUE(cluster_.WaitForState(1, v1::COMPLETED));
  }

  std::string State() {
    auto list = cluster_.ListAll();
    EXPECT_TRUE(list.ok());
    return list.ok() ? list->SerializeAsString() : "";
  }

  std::string WriteJob(const std::string& name, const std::string& yaml) {
    const std::string path = cluster_.dir() + "/" + name;
    std::ofstream(path) << yaml;
    return path;
  }

  // Runs snnctl and checks: non-zero exit, one line on stderr containing `expect`.
  void ExpectRejected(const std::vector<std::string>& args, const std::string& expect) {
    std::vector<std::string> full = {"--master", cluster_.master_address(), "--tenant", "alice"};
    full.insert(full.end(), args.begin(), args.end());
    CliRun run = cluster_.RunSnnctl(full);
    EXPECT_NE(run.exit_code, 0) << args.back();
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(run.err.rfind("snnctl: ", 0), 0u) << run.err;
    EXPECT_NE(run.err.find(expect), std::string::npos)
        << "wanted '" << expect << "' in: " << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
  }

  bool MasterCloses(const std::string& bytes) {
    return ServerClosesAfter(cluster_.master_port(), bytes);
  }

  TestCluster cluster_;
};

TEST_F(BadInputTest, SnnctlRejectsBadJobFilesAndChangesNothing) {
  const std::string before = State();
  const std::string ok_task = "task: {command: /bin/true, resources: {cores: 1, ksps: 1}}\n";
  ExpectRejected({"submit", cluster_.dir() + "/missing.yaml"}, "no such file");
  ExpectRejected({"submit", cluster_.dir()}, "is a directory");
  if (geteuid() != 0) {  // root reads any file: the permission case exists only for users
    const std::string locked = WriteJob("locked.yaml", ok_task);
    std::filesystem::permissions(locked, std::filesystem::perms::none);
    ExpectRejected({"submit", locked}, "cannot be read");
  }
  ExpectRejected({"submit", WriteJob("malformed.yaml", "name: [oops\n")}, "not valid YAML");
  ExpectRejected({"submit", WriteJob("unknown.yaml", "colour: red\n" + ok_task)},
                 "unknown field 'colour'");
  ExpectRejected({"submit", WriteJob("nocmd.yaml", "task: {resources: {cores: 1, ksps: 1}}\n")},
                 "task.command is required");
  ExpectRejected({"submit", WriteJob("nocores.yaml", "task: {command: x, resources: {ksps: 1}}\n")},
                 "task.resources.cores is required");
  ExpectRejected(
      {"submit", WriteJob("zero.yaml", "task: {command: x, resources: {cores: 0, ksps: 1}}\n")},
      "task.resources.cores is 0");
  ExpectRejected(
      {"submit", WriteJob("neg.yaml", "task: {command: x, resources: {cores: 1, ksps: -5}}\n")},
      "task.resources.ksps is -5");
  ExpectRejected(
      {"submit",
       WriteJob("absurd.yaml", "task: {command: x, resources: {cores: 99999999, ksps: 1}}\n")},
      "task.resources.cores is 99999999");
  ExpectRejected(
      {"submit", WriteJob("never.yaml", "task: {command: x, resources: {cores: 17, ksps: 1}}\n")},
      "no board in pool 'default' can ever hold this task");
  ExpectRejected({"submit", WriteJob("pool.yaml", "pool: nowhere\n" + ok_task)},
                 "pool 'nowhere' has no boards");
  ExpectRejected({"submit", WriteJob("zeroshape.yaml",
                                     "task: {command: x, resources: {cores: 0x3, ksps: 1}}\n")},
                 "shape 0x3 has a zero side");
  ExpectRejected({"submit", WriteJob("bigshape.yaml",
                                     "task: {command: x, resources: {cores: 9x9, ksps: 1}}\n")},
                 "no board in pool 'default' can ever hold this task: it asks for 9x9");
  const std::string bad_model = cluster_.dir() + "/bad_model.json";
  std::ofstream(bad_model) << R"({"populations": [{"name": "a", "size": 4, "role": "input"},
      {"name": "b", "size": 4, "role": "output"}], "projections": [{"from": "a", "to": "zz"}]})";
  ExpectRejected({"submit", WriteJob("badmodel.yaml", "task: {command: x, resources: {model: " +
                                                          bad_model + ", ksps: 1}}\n")},
                 "unknown population 'zz'");
  ExpectRejected({"estimate", bad_model}, "unknown population 'zz'");
  ExpectRejected({"submit", WriteJob("bothcores.yaml", "task: {command: x, resources: {model: " +
                                                           bad_model + ", cores: 4, ksps: 1}}\n")},
                 "give cores or model, not both");
  // The classes an attacker's corpus used: each one line naming the rule, nothing sent.
  const std::string task = "task: {command: /bin/true, resources: {cores: 1, ksps: 1}}\n";
  ExpectRejected({"submit", WriteJob("dup.yaml", "name: a\nname: b\n" + task)},
                 "has the key 'name' twice");
  ExpectRejected({"submit", WriteJob("docs.yaml", "name: a\n" + task + "---\nname: b\n" + task)},
                 "2 YAML documents");
  ExpectRejected(
      {"submit", WriteJob("wrap.yaml", "time_limit: \"307445734561825861:00\"\n" + task)},
      "time_limit");
  ExpectRejected({"submit", WriteJob("forged.yaml", "name: \"ok\\n42 forged RUNNING\"\n" + task)},
                 "name may not hold control characters");
  ExpectRejected({"submit", WriteJob("escape.yaml", "name: \"\\e[2Jx\"\n" + task)},
                 "name may not hold control characters");
  ExpectRejected({"submit", WriteJob("binary.yaml", std::string("name: \xff\xfe\n") + task)},
                 "not UTF-8 text");
  ExpectRejected(
      {"submit", WriteJob("deep.yaml", "name: " + std::string(5000, '[') + std::string(5000, ']'))},
      "deeper than 32");
  ExpectRejected({"submit", WriteJob("huge.yaml", "task:\n  command: /bin/true\n  env: {BLOB: " +
                                                      std::string(600 << 10, 'x') +
                                                      "}\n  resources: {cores: 1, ksps: 1}\n")},
                 "at most 524288 are accepted");
  ExpectRejected({"submit", "/dev/zero"}, "not a regular file");
  ExpectRejected({"show", "42"}, "job 42 not found for tenant 'alice'");
  ExpectRejected({"cancel", "42"}, "job 42 not found");
  ExpectRejected({"cancel", "1"}, "has already ended (COMPLETED)");
  // A negative number is an operand (tenant credit T -0.49), so a negative job ID is refused as
  // one.
  ExpectRejected({"show", "-3"}, "job ID '-3' is not a positive number");
  ExpectRejected({"show", "1", "-x"}, "unknown option");
  EXPECT_EQ(State(), before) << "a rejected request changed the state";
}

// What runs is what was submitted, and YAML as the standard has it: a NUL in a command, an
// argument or the environment, or a relative working directory, is refused by snnctl and by the
// master (which trusts no client); an alias bomb is one line, not minutes of work; a UTF-16 job
// file (with its byte order mark) runs like its UTF-8 twin.
TEST_F(BadInputTest, NulsRelativeDirsAndAliasBombsAreRefusedAndUtf16Runs) {
  const std::string before = State();
  ExpectRejected({"submit", WriteJob("nul.yaml",
                                     "task: {command: \"/bin/echo\\0rm\", resources: "
                                     "{cores: 1, ksps: 1}}\n")},
                 "task.command holds a NUL character");
  ExpectRejected({"submit", WriteJob("nulenv.yaml",
                                     "task: {command: /bin/true, env: {A: \"x\\0y\"}, "
                                     "resources: {cores: 1, ksps: 1}}\n")},
                 "task.env.A holds a NUL character");
  ExpectRejected({"submit", WriteJob("reldir.yaml",
                                     "task: {command: /bin/true, workdir: run, "
                                     "resources: {cores: 1, ksps: 1}}\n")},
                 "task.workdir must be an absolute path");
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  ExpectRejected({"submit", WriteJob("bomb.yaml", bomb)}, "aliases (*name) are expanded");
  // The master refuses them too, from a client that skips snnctl's checks.
  v1::JobSpec nul = ShellJob("exit 0");
  nul.mutable_task()->set_command(std::string("/bin/sh\0-x", 10));
  auto refused = cluster_.Submit(nul);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "task.command holds a NUL character");
  v1::JobSpec relative = ShellJob("exit 0");
  relative.mutable_task()->set_workdir("tmp");
  refused = cluster_.Submit(relative);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("task.workdir must be an absolute path"),
            std::string::npos);
  EXPECT_EQ(State(), before) << "a rejected request changed the state";

  const std::u16string text =
      u"name: utf16\ntask: {command: /bin/true, resources: {cores: 1, "
      u"ksps: 1}}\n";
  std::string utf16 = "\xFF\xFE";
  for (char16_t u : text)
    utf16 += std::string{static_cast<char>(u & 0xFF), static_cast<char>(u >> 8)};
  CliRun run = cluster_.RunSnnctl({"--master", cluster_.master_address(), "--tenant", "alice",
                                   "submit", WriteJob("utf16.yaml", utf16)});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(cluster_.WaitForState(2, v1::COMPLETED));
}

// The agent never opens a path a job names: snnctl reads the model as its user and sends the
// network; the master refuses a job that names a model without carrying it. Nothing of a file's
// content is ever echoed.
TEST_F(BadInputTest, ModelsTravelInTheJobAndNoDaemonOpensAUsersPath) {
  const std::string before = State();
  const std::string shadow_job = WriteJob(
      "shadow.yaml", "task: {command: /bin/true, resources: {model: /etc/shadow, ksps: 1}}\n");
  if (geteuid() == 0) {
    CliRun as_user = cluster_.RunSnnctlAs("nobody", {"submit", shadow_job});
    EXPECT_NE(as_user.exit_code, 0);
    EXPECT_NE(as_user.err.find("/etc/shadow"), std::string::npos) << as_user.err;
    EXPECT_NE(as_user.err.find("cannot be read"), std::string::npos) << as_user.err;
    EXPECT_EQ(as_user.err.find("root:"), std::string::npos) << as_user.err;
  }
  const std::string fifo = cluster_.dir() + "/model.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  ExpectRejected({"submit", WriteJob("fifo.yaml", "task: {command: /bin/true, resources: {model: " +
                                                      fifo + ", ksps: 1}}\n")},
                 "not a regular file");
  // A raw client naming a path: refused by the master, before any agent sees it.
  v1::JobSpec raw = ShellJob("exit 0");
  raw.mutable_task()->mutable_resources()->set_model("/etc/shadow");
  auto refused = cluster_.Submit(raw);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("names /etc/shadow but the job carries no network"),
            std::string::npos)
      << refused.status().message();
  EXPECT_EQ(State(), before);
  // A network that would once abort the agent (std::bad_alloc from its delay ring): the job
  // fails with the reason, and the agent runs on.
  cluster_.StartAgent("node2",
                      "backend: sim\nboards:\n  - {type: sim-big, mesh: 2x2, "
                      "neurons_per_core: 65536, ksps: 1000, streams: 4}\n");
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 2; }));
  const pid_t agent = cluster_.agent_pid("node2");
  auto model = ParseModelJson(R"({"populations": [{"name": "in", "size": 8000, "role": "input"},
      {"name": "out", "size": 8000, "role": "output"}],
      "projections": [{"from": "in", "to": "out", "connectivity": "one_to_one",
                       "delay_steps": 65536}]})");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  v1::JobSpec heavy = ShellJob("exit 0", 2);
  *heavy.mutable_task()->mutable_network() = *model;
  heavy.mutable_task()->mutable_resources()->set_model("heavy.json");
  heavy.mutable_task()->mutable_resources()->set_board_type("sim-big");
  ASSERT_TRUE(cluster_.Submit(heavy).ok());
  ASSERT_TRUE(cluster_.WaitForState(2, v1::FAILED));
  auto failed = cluster_.Show(2);
  EXPECT_NE(failed->reason().find("steps of delay); the simulator holds at most"),
            std::string::npos)
      << failed->reason();
  EXPECT_EQ(cluster_.agent_pid("node2"), agent);
  EXPECT_TRUE(kill(agent, 0) == 0) << "the agent died";
  EXPECT_EQ(cluster_.NodesUp(), 2);
}

// Bytes that are not UTF-8 where protobuf wants text: one line from snnctl before anything is
// sent; from a raw client, an answer naming the message, and the master serves on.
TEST_F(BadInputTest, TextThatIsNotUtf8IsOneLineAndChangesNothing) {
  const std::string before = State();
  ExpectRejected({"--tenant", "lab\xff", "jobs"}, "is not UTF-8 text (byte 3)");
  // A SubmitRequest is field 1, length-delimited: a BytesValue with the same bytes is one.
  v1::JobSpec spec = ShellJob("exit 0");
  spec.set_name("AAAA");
  std::string bytes = spec.SerializeAsString();
  bytes.replace(bytes.find("AAAA"), 4, "\xff\xfe\xc0\x80");
  google::protobuf::BytesValue forged;
  forged.set_value(bytes);
  auto answer =
      cluster_.Client()->Call<v1::SubmitResponse>(std::string(rpc::kJobSubmit.name), forged);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().message(),
            "malformed job.submit request: not a SubmitRequest, or a string in it is not UTF-8 "
            "text");
  EXPECT_EQ(State(), before);
  ASSERT_TRUE(cluster_.Submit(ShellJob("exit 0")).ok());
  EXPECT_TRUE(cluster_.WaitForState(2, v1::COMPLETED));
}

TEST_F(BadInputTest, UnreachableMasterIsReportedWithinSeconds) {
  // A port nobody listens on.
  uint16_t closed_port = 0;
  {
    asio::io_context io;
    tcp::acceptor a(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    closed_port = a.local_endpoint().port();
  }
  CliRun refused =
      cluster_.RunSnnctl({"--master", "127.0.0.1:" + std::to_string(closed_port), "jobs"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("cannot reach the master"), std::string::npos) << refused.err;
  // A listener that never answers: the client gives up at its timeout instead of hanging.
  asio::io_context io;
  tcp::acceptor silent(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  CliRun hung =
      cluster_.RunSnnctl({"--master", "127.0.0.1:" + std::to_string(silent.local_endpoint().port()),
                          "--timeout", "2", "jobs"});
  EXPECT_EQ(hung.exit_code, 1);
  EXPECT_NE(hung.err.find("no answer"), std::string::npos) << hung.err;
  EXPECT_LT(hung.seconds, 10.0);
}

// Anyone may try a made-up join token: the master says no every time, but its log gets a line in
// a hundred (with the count), not one per try.
TEST_F(BadInputTest, MadeUpJoinTokensDoNotFillTheMastersLog) {
  auto client = cluster_.Client();
  v1::EnrolRequest enrol;
  enrol.set_node("ghost");
  for (int i = 0; i < 300; ++i) {
    enrol.set_token("made-up-" + std::to_string(i));
    auto answer = client->Call(rpc::kNodeEnrol, enrol);
    ASSERT_FALSE(answer.ok());
    ASSERT_EQ(answer.status().code(), Code::kUnauthenticated) << answer.status().ToString();
  }
  std::ifstream log(cluster_.dir() + "/master.log");
  std::string line;
  int lines = 0;
  while (std::getline(log, line)) lines += line.find("refused an enrolment") != std::string::npos;
  EXPECT_GE(lines, 1);
  EXPECT_LE(lines, 3) << "a line per made-up token";
}

TEST_F(BadInputTest, MasterSurvivesGarbageAndKeepsServing) {
  const std::string before = State();
  EXPECT_TRUE(MasterCloses(std::string("\x7f\xff\xff\xff", 4)));  // oversized
  EXPECT_TRUE(
      MasterCloses(std::string("\x00\x00\x01\x00"
                               "partial",
                               11)));                                                 // truncated
  EXPECT_TRUE(MasterCloses(std::string("\x00\x00\x00\x05\xff\xff\xff\xff\xff", 9)));  // garbage
  EXPECT_TRUE(MasterCloses("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));  // wrong protocol
  // Well-framed but wrong: errors come back as answers.
  auto client = cluster_.Client();
  auto unknown = client->Call<v1::ShowJobResponse>("job.frobnicate", v1::ShowJobRequest());
  EXPECT_NE(unknown.status().message().find("unknown method"), std::string::npos);
  v1::Envelope bad_payload;
  // Over TLS but without a MUNGE credential: refused as unauthenticated.
  RpcClient anonymous(std::chrono::milliseconds(3000));
  anonymous.set_tls(*MakeClientTls({cluster_.auth().ca_file(), "", ""}));
  ASSERT_TRUE(anonymous.Connect(HostPort{"127.0.0.1", cluster_.master_port()}).ok());
  auto unauth = anonymous.Call(rpc::kJobList, v1::ListJobsRequest());
  EXPECT_EQ(unauth.status().code(), Code::kUnauthenticated) << unauth.status().ToString();
  // Without TLS the master does not even answer.
  RpcClient plain(std::chrono::milliseconds(3000));
  ASSERT_TRUE(plain.Connect(HostPort{"127.0.0.1", cluster_.master_port()}).ok());
  EXPECT_FALSE(plain.Call(rpc::kJobList, v1::ListJobsRequest()).ok());
  // A forged agent registration with nonsense boards is refused.
  v1::RegisterRequest forged;
  forged.mutable_node()->set_name("evil");
  forged.mutable_node()->add_pools("default");
  auto* b = forged.mutable_node()->add_boards();
  b->set_width(100000);
  auto reg = client->Call(rpc::kNodeRegister, forged);
  EXPECT_FALSE(reg.ok());
  EXPECT_EQ(State(), before);
  EXPECT_EQ(cluster_.NodesUp(), 1) << "the real agent was disturbed";
  ASSERT_TRUE(cluster_.Submit(ShellJob("exit 0")).ok());
  EXPECT_TRUE(cluster_.WaitForState(2, v1::COMPLETED));
}

TEST(AgentGarbageTest, AgentSurvivesGarbageFromItsMasterAndReconnects) {
  TestCluster cluster;
  asio::io_context io;
  tcp::acceptor fake_master(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const uint16_t port = fake_master.local_endpoint().port();
  // Point an agent at the fake master (StartAgent uses the cluster's master address).
  cluster.StartAgent("node1", SmallBoards(),
                     {"--master=127.0.0.1:" + std::to_string(port), "--tls=false"});
  tcp::socket first(io);
  fake_master.accept(first);
  asio::write(first, asio::buffer(std::string("\x7f\xff\xff\xff", 4)));
  char buf[4096];
  boost::system::error_code ec;
  while (!ec) first.read_some(asio::buffer(buf), ec);  // the agent drops this session
  tcp::socket second(io);
  fake_master.accept(second);  // ...and comes back
  // A launch whose payload is garbage gets an error answer; the session stays up.
  v1::Envelope launch;
  launch.set_id(1);
  launch.set_method(std::string(rpc::kAgentLaunch.name));
  launch.set_payload("\xff\xff\xff");
  asio::write(second, asio::buffer(EncodeFrame(launch)));
  bool answered = false;
  while (!answered) {
    uint8_t header[4];
    asio::read(second, asio::buffer(header));
    std::vector<uint8_t> body(DecodeFrameLength(header));
    asio::read(second, asio::buffer(body));
    auto envelope = DecodeEnvelope(body.data(), body.size());
    ASSERT_TRUE(envelope.ok());
    if (envelope->kind() == v1::Envelope::RESPONSE && envelope->id() == 1) {
      EXPECT_NE(envelope->code(), 0);
      EXPECT_NE(envelope->error().find("malformed"), std::string::npos);
      answered = true;
    }
  }
}

}  // namespace
}  // namespace snn::testing
