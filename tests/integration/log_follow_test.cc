// GET /v1/jobs/{id}/logs?follow=true on real daemons (master/http/log_follow.h): a running job's
// output arrives as it is written, the stream ends after the job's end with all of it, a job
// that does not exist gets one error event, and follow= on another route is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "common/base/file_util.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/http_client.h"

namespace snn::testing {
namespace {

constexpr char kPolicy[] = R"(access:
  personal_tenants: false
tenants:
  - name: lab-a
    users: [root]
)";

TEST(LogFollowTest, ARunningJobsOutputArrivesAsItIsWrittenAndTheStreamEndsWithTheJob) {
  if (geteuid() != 0) GTEST_SKIP() << "makes a token of root's with MUNGE: needs root";
  TestCluster cluster;
  const uint16_t port = cluster.StartMasterWithApiAndPolicy(kPolicy);
  ASSERT_NE(port, 0) << ReadFile(cluster.dir() + "/master.log");
  cluster.StartAgent("node1", SmallBoards());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  CliRun token = cluster.Snnctl({"token", "create", "--parsable"}, "lab-a");
  ASSERT_EQ(token.exit_code, 0) << token.err;
  const std::string tok = token.out.substr(0, token.out.find('\n'));
  const std::string ca = cluster.auth().ca_file();
  const std::string gate = cluster.dir() + "/gate";
  const std::string job = cluster.dir() + "/job.yaml";
  std::ofstream(job) << "name: talks\ntenant: lab-a\ntask:\n  command: /bin/sh\n  args: ['-c', "
                        "'echo first; while [ ! -e "
                     << gate
                     << " ]; do sleep 0.05; done; echo second']\n  resources: {cores: 1, ksps: "
                        "10, streams: 1}\n";
  // Followed from before it starts: the stream waits for the task.
  auto submit = cluster.Snnctl({"submit", "--hold", job}, "lab-a");
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  auto stream = HttpEventStream::Open(
      "127.0.0.1", port, ca,
      {"GET", "/v1/jobs/1/logs?follow=true", tok, "", {{"Snn-Tenant", "lab-a"}}});
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  const auto& s = *stream;
  ASSERT_TRUE(TestCluster::WaitUntil(
      [&] { return s->text().find("text/event-stream") != std::string::npos; }));
  ASSERT_EQ(cluster.Snnctl({"release", "1"}, "lab-a").exit_code, 0);
  // "first\n" (base64 Zmlyc3QK) while the task still runs.
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    return s->text().find("\"data\":\"Zmlyc3QK\"") != std::string::npos;
  })) << s->text();
  EXPECT_EQ(s->text().find("event: end"), std::string::npos) << s->text();
  std::ofstream(gate).close();
  // "second\n" (c2Vjb25kCg==), then the end, and the server closes the stream.
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return s->ended(); })) << s->text();
  const std::string text = s->text();
  const size_t second = text.find("\"data\":\"c2Vjb25kCg==\"");
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_NE(text.find("event: end\ndata: {\"state\": \"COMPLETED\"}", second), std::string::npos)
      << text;

  auto missing = HttpEventStream::Open(
      "127.0.0.1", port, ca,
      {"GET", "/v1/jobs/99/logs?follow=true", tok, "", {{"Snn-Tenant", "lab-a"}}});
  ASSERT_TRUE(missing.ok());
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return (*missing)->ended(); })) << (*missing)->text();
  EXPECT_NE((*missing)->text().find("event: error\ndata: {\"error\": "), std::string::npos)
      << (*missing)->text();
  auto wrong = HttpDo("127.0.0.1", port, ca,
                      {"GET", "/v1/jobs/1?follow=true", tok, "", {{"Snn-Tenant", "lab-a"}}});
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->status, 400) << wrong->body;
  EXPECT_NE(wrong->body.find("follow=true is for GET /v1/jobs/{id}/logs"), std::string::npos);
}

}  // namespace
}  // namespace snn::testing
