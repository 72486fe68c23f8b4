// Node certificates on real daemons: a node enrolled with a join token renews its certificate
// over its own session before it expires, and registers with the renewed one next time.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/base/file_util.h"
#include "common/identity/pki.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

// A node renews its certificate before it expires, over its own session, and stays UP; the new
// certificate names the same node and works for the next session.
TEST(CertificateRenewalTest, ANodeRenewsItsCertificateBeforeItExpires) {
  TestCluster cluster;
  cluster.StartMaster({"--node_cert_validity_s=12"});
  std::ofstream(cluster.dir() + "/node1.boards.yaml") << SmallBoards();
  CliRun token = cluster.Snnctl(
      {"node", "token", "node1", "--parsable", "--boards", cluster.dir() + "/node1.boards.yaml"});
  ASSERT_EQ(token.exit_code, 0) << token.err;
  const std::string tls = cluster.dir() + "/node1.own-tls";
  std::filesystem::create_directories(tls);
  std::filesystem::copy_file(cluster.auth().ca_file(), tls + "/ca.crt");
  std::ofstream(cluster.dir() + "/node1.token") << token.out;
  cluster.StartAgent("node1", SmallBoards(),
                     {"--tls_dir=" + tls, "--join_token_file=" + cluster.dir() + "/node1.token"});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  auto serial = [&] {
    auto pem = ReadWholeFile(tls + "/node.pem", "node.pem");
    auto info = pem.ok() ? pki::ReadCert(*pem) : Result<pki::CertInfo>(pem.status());
    return info.ok() ? info->common_name + "/" + info->serial_hex : std::string();
  };
  const std::string first = serial();
  ASSERT_EQ(first.rfind("node1/", 0), 0u) << first;
  // Due after two thirds of its 12 s: a new certificate within about 9 s.
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return serial() != first; }, 20000));
  EXPECT_EQ(serial().rfind("node1/", 0), 0u);
  EXPECT_EQ(cluster.NodesUp(), 1);
  // The next session uses the renewed certificate (the token is long used up).
  cluster.StopAgent("node1");
  cluster.StartAgent("node1", SmallBoards(), {"--tls_dir=" + tls});
  auto registrations = [&] {
    auto log = ReadWholeFile(cluster.dir() + "/node1.log", "agent log");
    size_t n = 0;
    for (size_t at = 0;
         log.ok() && (at = log->find("registered with master", at)) != std::string::npos; ++at) {
      ++n;
    }
    return n;
  };
  EXPECT_TRUE(TestCluster::WaitUntil([&] { return registrations() >= 2; }))
      << "the agent did not register again with its renewed certificate";
}

}  // namespace
}  // namespace snn::testing
