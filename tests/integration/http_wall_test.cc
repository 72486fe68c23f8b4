// The HTTP listener's wall on real daemons (issue 64): a request's token is judged from its head,
// before its body is read; a client without one holds no body, a bounded number of connections
// per address (the oldest closed for a newcomer) and those only briefly; a user's connections
// count against that user only. Memory is read from /proc (VmRSS).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>

#include "common/base/file_util.h"
#include "common/rpc/asio.h"
#include "common/rpc/tls.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/http_client.h"
#include "tests/test_util/sockets.h"

namespace snn::testing {
namespace {

constexpr char kPolicy[] = R"(access:
  personal_tenants: false
tenants:
  - name: lab-a
    users: [root, daemon, lp]
)";

class HttpWallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Many sockets at once: the test's own file limit up to its hard limit.
    rlimit files{};
    getrlimit(RLIMIT_NOFILE, &files);
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }

  void Start(std::vector<std::string> flags = {}) {
    std::ofstream(cluster_.dir() + "/policy.yaml") << kPolicy;
    flags.push_back("--policy_file=" + cluster_.dir() + "/policy.yaml");
    port_ = cluster_.StartMasterWithApi(flags);
    ASSERT_NE(port_, 0) << ReadFile(cluster_.dir() + "/master.log");
  }

  std::string TokenOf(const std::string& user) {
    CliRun run = cluster_.RunSnnctlAs(user, {"token", "create", "--parsable"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.out.substr(0, run.out.find('\n'));
  }

  // A TLS connection to the API from `from` (a loopback address), as anyone can open one.
  std::unique_ptr<TlsStream> Open(const std::string& from = "127.0.0.1") {
    auto tls = MakeClientTls({cluster_.auth().ca_file(), "", ""});
    contexts_.push_back(*tls);
    auto socket = ConnectFrom(io_, from, port_);
    if (!socket) return nullptr;
    auto stream = std::make_unique<TlsStream>(std::move(*socket), **tls);
    boost::system::error_code ec;
    stream->handshake(ssl::stream_base::client, ec);
    return ec ? nullptr : std::move(stream);
  }

  // Reads what the server sends until it closes (or `limit` bytes), with a receive timeout so a
  // server that answers nothing fails the test rather than hanging it.
  static std::string ReadAnswer(TlsStream& stream, size_t limit = 1 << 16) {
    timeval timeout{30, 0};
    setsockopt(stream.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout,
               sizeof timeout);
    std::string out;
    char buf[4096];
    while (out.size() < limit) {
      boost::system::error_code ec;
      const size_t n = stream.read_some(asio::buffer(buf), ec);
      out.append(buf, n);
      if (ec || out.find("\r\n\r\n") != std::string::npos) {
        // The head is in; its body is short (an error line): read what already came.
        if (ec || out.find("}\n") != std::string::npos || out.rfind("HTTP/1.1 100 ", 0) == 0) {
          break;
        }
      }
    }
    return out;
  }

  static std::string Head(const std::string& token, size_t length, const std::string& extra = "") {
    std::string head = "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/yaml\r\n";
    if (!token.empty()) head += "Authorization: Bearer " + token + "\r\nSnn-Tenant: lab-a\r\n";
    return head + extra + "Content-Length: " + std::to_string(length) + "\r\n\r\n";
  }

  bool UserAnswers(const std::string& token) {
    auto r =
        HttpDo("127.0.0.1", port_, cluster_.auth().ca_file(), {"GET", "/v1/pool", token, "", {}});
    return r.ok() && r->status == 200;
  }

  asio::io_context io_;
  std::vector<std::shared_ptr<ssl::context>> contexts_;
  TestCluster cluster_;
  uint16_t port_ = 0;
};

// The old listener read the whole megabyte, then answered 401: a client that sends only the head
// got no answer at all, and each such connection held its body.
TEST_F(HttpWallTest, ABodyWithoutAValidTokenIsRefusedFromItsHeadAlone) {
  if (geteuid() != 0) GTEST_SKIP() << "makes tokens with MUNGE as root";
  Start();
  cluster_.StartAgent("node1", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster_.NodesUp() == 1; }));
  {
    auto s = Open();
    ASSERT_TRUE(s);
    asio::write(*s, asio::buffer(Head("", 1 << 20)));
    const std::string answer = ReadAnswer(*s);
    EXPECT_EQ(answer.rfind("HTTP/1.1 401", 0), 0u) << answer;
    EXPECT_NE(answer.find("a request with a body needs a token"), std::string::npos) << answer;
    EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  }
  {
    // A token the master does not know: refused with the token's own reason, body unread.
    auto s = Open();
    ASSERT_TRUE(s);
    asio::write(*s, asio::buffer(Head("snntok.nosuchtoken", 1 << 20)));
    const std::string answer = ReadAnswer(*s);
    EXPECT_EQ(answer.rfind("HTTP/1.1 401", 0), 0u) << answer;
  }
  {
    // Too large, said from the head: 413 before a byte of the body.
    auto s = Open();
    ASSERT_TRUE(s);
    asio::write(*s, asio::buffer(Head(TokenOf("root"), (1 << 20) + 1)));
    const std::string answer = ReadAnswer(*s);
    EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
  }
  {
    // A client that asks before sending (curl does, for big bodies) is told to go on.
    const std::string job =
        "name: asked\ntenant: lab-a\ntask:\n  command: /bin/true\n  resources: {cores: 1, ksps: "
        "1}\n";
    auto s = Open();
    ASSERT_TRUE(s);
    asio::write(*s, asio::buffer(Head(TokenOf("daemon"), job.size(), "Expect: 100-continue\r\n")));
    std::string answer;
    char buf[64];
    while (answer.find("\r\n\r\n") == std::string::npos) {
      boost::system::error_code ec;
      const size_t n = s->read_some(asio::buffer(buf), ec);
      answer.append(buf, n);
      if (ec) break;
    }
    EXPECT_EQ(answer.rfind("HTTP/1.1 100 Continue\r\n\r\n", 0), 0u) << answer;
    asio::write(*s, asio::buffer(job));
    answer = ReadAnswer(*s);
    EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
    EXPECT_NE(answer.find("\"job_id\""), std::string::npos) << answer;
  }
}

// 1,000 half-sent bodies without a token (the old master grew 327 MB from 300, and kept it).
TEST_F(HttpWallTest, HalfSentBodiesWithoutATokenCostTheMasterLittle) {
  if (geteuid() != 0) GTEST_SKIP() << "makes tokens with MUNGE as root";
  Start();
  const std::string token = TokenOf("root");
  ASSERT_TRUE(UserAnswers(token));
  const int64_t before = RssKb(cluster_.master_pid());
  const std::string half(512 * 1024, 'x');
  std::vector<std::unique_ptr<TlsStream>> held;
  for (int i = 0; i < 1000; ++i) {
    // From 16 addresses, so that the per-address cap is not what bounds it.
    auto s = Open("127.0.0." + std::to_string(2 + i % 16));
    ASSERT_TRUE(s) << "connection " << i;
    boost::system::error_code ec;
    asio::write(*s, asio::buffer(Head("", 1 << 20) + half), ec);  // the server may end it early
    held.push_back(std::move(s));
    if (held.size() > 200) held.erase(held.begin());
  }
  EXPECT_TRUE(UserAnswers(token));
  const int64_t grown_kb = RssKb(cluster_.master_pid()) - before;
  EXPECT_LT(grown_kb, 50 * 1024) << "the master grew by " << grown_kb << " kB";
}

// Idle connections without a token from one address: one more than the cap closes the oldest,
// so a user of that address always gets in (the old cap of 1,024 per address refused everyone
// once a client held them), and the held ones are closed after a while.
TEST_F(HttpWallTest, ConnectionsWithoutATokenCannotLockAnAddressesUsersOut) {
  if (geteuid() != 0) GTEST_SKIP() << "makes tokens with MUNGE as root";
  Start({"--http_max_anonymous_per_address=20", "--http_anonymous_timeout_s=3"});
  const std::string token = TokenOf("daemon");
  std::vector<std::unique_ptr<tcp::socket>> held;
  for (int i = 0; i < 1100; ++i) {
    auto s = std::make_unique<tcp::socket>(io_);
    boost::system::error_code ec;
    s->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
    ASSERT_FALSE(ec) << "connection " << i << ": " << ec.message();
    s->non_blocking(true);
    held.push_back(std::move(s));
  }
  auto closed = [&] { return ClosedByServer(held); };
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return closed() >= 1080; }))
      << closed() << " of 1100 closed: more than 20 connections without a token were kept";
  EXPECT_TRUE(UserAnswers(token));
  // The rest never send a request: closed once their time is up.
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return closed() == held.size(); }))
      << closed() << " of " << held.size() << " closed";
}

// A user's connections count against that user at the address: one who holds too many (event
// streams here, which never end by themselves) is refused with that reason; another user of the
// same address is not.
TEST_F(HttpWallTest, OneUserHoldingManyConnectionsLocksOutOnlyThemself) {
  if (geteuid() != 0) GTEST_SKIP() << "makes tokens with MUNGE as root";
  Start({"--http_max_per_user=3"});
  const std::string daemon = TokenOf("daemon");
  const std::string lp = TokenOf("lp");
  const std::string ca = cluster_.auth().ca_file();
  std::vector<std::unique_ptr<HttpEventStream>> held;
  for (int i = 0; i < 3; ++i) {
    auto stream =
        HttpEventStream::Open("127.0.0.1", port_, ca, {"GET", "/v1/events", daemon, "", {}});
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    held.push_back(std::move(stream).value());
  }
  for (const auto& stream : held) {
    ASSERT_TRUE(TestCluster::WaitUntil(
        [&] { return stream->text().find(": snn events") != std::string::npos; }));
  }
  auto fourth = HttpDo("127.0.0.1", port_, ca, {"GET", "/v1/pool", daemon, "", {}});
  ASSERT_TRUE(fourth.ok()) << fourth.status().ToString();
  EXPECT_EQ(fourth->status, 429) << fourth->body;
  EXPECT_NE(fourth->body.find("3 connections of uid"), std::string::npos) << fourth->body;
  EXPECT_TRUE(UserAnswers(lp));
  // One goes: there is room again.
  held.pop_back();
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return UserAnswers(daemon); }));
}

// A job's form upload (with its model, master/http/model_upload.h) may be larger than a body, but
// only with a token, within its own limit, one per user at a time and a few in all.
TEST_F(HttpWallTest, AnUploadNeedsATokenAndEachUserSendsOneAtATime) {
  if (geteuid() != 0) GTEST_SKIP() << "makes tokens with MUNGE as root";
  Start({"--http_max_upload_mb=16"});
  const std::string root = TokenOf("root"), daemon = TokenOf("daemon"), lp = TokenOf("lp");
  auto head = [](const std::string& token, size_t length) {
    std::string out =
        "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
        "Expect: 100-continue\r\n";
    if (!token.empty()) out += "Authorization: Bearer " + token + "\r\nSnn-Tenant: lab-a\r\n";
    return out + "Content-Length: " + std::to_string(length) + "\r\n\r\n";
  };
  // What the server answers first: a refusal, or "100 Continue" (the body is awaited).
  auto send = [&](const std::string& token, size_t length) {
    auto s = Open();
    EXPECT_TRUE(s);
    if (!s) return std::make_pair(std::unique_ptr<TlsStream>(), std::string());
    asio::write(*s, asio::buffer(head(token, length)));
    std::string answer = ReadAnswer(*s);
    return std::make_pair(std::move(s), answer);
  };
  EXPECT_EQ(send("", 8 << 20).second.rfind("HTTP/1.1 401", 0), 0u);
  const std::string too_big = send(root, (16 << 20) + 1).second;
  EXPECT_EQ(too_big.rfind("HTTP/1.1 413", 0), 0u) << too_big;
  EXPECT_NE(too_big.find("form upload with its model 16 MiB"), std::string::npos) << too_big;
  auto first = send(root, 8 << 20);
  EXPECT_EQ(first.second.rfind("HTTP/1.1 100 Continue", 0), 0u) << first.second;
  const std::string again = send(root, 8 << 20).second;
  EXPECT_EQ(again.rfind("HTTP/1.1 429", 0), 0u) << again;
  EXPECT_NE(again.find("an upload of yours is being read"), std::string::npos) << again;
  auto other = send(daemon, 8 << 20);
  EXPECT_EQ(other.second.rfind("HTTP/1.1 100 Continue", 0), 0u) << other.second;
  const std::string third = send(lp, 8 << 20).second;
  EXPECT_NE(third.find("too many uploads at once"), std::string::npos) << third;
  EXPECT_TRUE(UserAnswers(lp));  // other requests are not held up
  // The first goes: its user may send again.
  first.first.reset();
  EXPECT_TRUE(TestCluster::WaitUntil(
      [&] { return send(root, 8 << 20).second.rfind("HTTP/1.1 100 Continue", 0) == 0; }));
}

}  // namespace
}  // namespace snn::testing
