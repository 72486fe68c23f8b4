// The master and the agent serve Prometheus metrics that promtool accepts, with the series an
// operator dashboards: jobs by state, pool and tenant; RPCs by method and code; resources per
// pool and board type; per-task spikes on the agent.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "common/rpc/asio.h"
#include "snn_paths.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

std::string ReadPort(const std::string& path) {
  std::ifstream in(path);
  std::string port;
  in >> port;
  return port;
}

// GET http://127.0.0.1:PORT/metrics; the body, or "" on any error.
std::string Scrape(const std::string& port) {
  try {
    asio::io_context io;
    tcp::socket socket(io);
    socket.connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(std::stoi(port))));
    const std::string request =
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    asio::write(socket, asio::buffer(request));
    std::string response;
    boost::system::error_code ec;
    asio::read(socket, asio::dynamic_buffer(response), ec);
    const size_t body = response.find("\r\n\r\n");
    if (response.rfind("HTTP/1.1 200", 0) != 0 || body == std::string::npos) return "";
    return response.substr(body + 4);
  } catch (const std::exception&) {
    return "";
  }
}

// Runs promtool's linter over `text`; its exit code, and what it said in `said`.
int PromtoolCheck(const std::string& dir, const std::string& name, const std::string& text,
                  std::string* said) {
  const std::string file = dir + "/" + name + ".prom";
  std::ofstream(file) << text;
  FILE* p = popen(("promtool check metrics < " + file + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[512];
  while (fgets(buf, sizeof buf, p) != nullptr) *said += buf;
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(MetricsTest, LiveScrapesOfMasterAndAgentPassPromtoolAndShowTheCluster) {
  TestCluster cluster;
  cluster.StartMaster({"--metrics_listen=127.0.0.1:0",
                       "--metrics_port_file=" + cluster.dir() + "/master.metrics_port"});
  cluster.StartAgent("node1", SmallBoards(2, 4, 1000, 4),
                     {"--metrics_listen=127.0.0.1:0",
                      "--metrics_port_file=" + cluster.dir() + "/node1.metrics_port"});
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 1; }));
  // Another tenant's job first, so that alice's job 1 is global job 2.
  ASSERT_TRUE(cluster.Submit(ShellJob("exit 0"), "bob").ok());
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    auto bobs = cluster.Show(1, "bob");
    return bobs.ok() && bobs->state() == v1::COMPLETED;
  }));
  auto running = cluster.Submit(ShellJob("sleep 30", 4));
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  ASSERT_TRUE(cluster.WaitForState(running->tenant_job_id(), v1::RUNNING));

  const std::string master_port = ReadPort(cluster.dir() + "/master.metrics_port");
  const std::string agent_port = ReadPort(cluster.dir() + "/node1.metrics_port");
  ASSERT_NE(master_port, "");
  ASSERT_NE(agent_port, "");

  std::string master;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    master = Scrape(master_port);
    return Has(master, "snn_job_starts_total{how=\"in_order\"} 2");
  })) << master;
  std::string said;
  EXPECT_EQ(PromtoolCheck(cluster.dir(), "master", master, &said), 0) << said;
  EXPECT_TRUE(Has(master, "snn_jobs{state=\"running\",pool=\"default\",tenant=\"alice\"} 1"))
      << master;
  EXPECT_TRUE(Has(master, "snn_job_submits_total 2")) << master;
  EXPECT_TRUE(Has(master, "snn_rpc_requests_total{code=\"ok\",method=\"job.submit\"} 2")) << master;
  EXPECT_TRUE(Has(master, "snn_nodes{state=\"up\"} 1")) << master;
  EXPECT_TRUE(Has(master, "snn_cores{pool=\"default\",type=\"sim-v1\",use=\"used\"} 4")) << master;
  EXPECT_TRUE(Has(master, "snn_cores{pool=\"default\",type=\"sim-v1\",use=\"free\"} 28")) << master;
  EXPECT_TRUE(Has(master, "snn_scheduling_pass_duration_seconds_count")) << master;
  // A tenant's account: its credits, charges and the budget alerts it has crossed.
  ASSERT_EQ(cluster.Snnctl({"tenant", "credit", "alice", "100"}).exit_code, 0);
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    master = Scrape(master_port);
    return Has(master, "snn_tenant_credit{tenant=\"alice\"} 100");
  })) << master;
  EXPECT_TRUE(Has(master, "snn_tenant_budget_alerts{tenant=\"alice\"} 0")) << master;
  EXPECT_TRUE(Has(master, "snn_tenant_budget_exhausted{tenant=\"alice\"} 0")) << master;
  said.clear();
  EXPECT_EQ(PromtoolCheck(cluster.dir(), "master_accounts", master, &said), 0) << said;

  std::string agent;
  ASSERT_TRUE(TestCluster::WaitUntil([&] {
    agent = Scrape(agent_port);
    return Has(agent, "snn_agent_tasks 1");
  })) << agent;
  said.clear();
  EXPECT_EQ(PromtoolCheck(cluster.dir(), "agent", agent, &said), 0) << said;
  EXPECT_TRUE(Has(agent, "snn_agent_registered 1")) << agent;
  EXPECT_TRUE(Has(agent, "snn_agent_task_spikes_total{")) << agent;
  EXPECT_TRUE(Has(agent, "kind=\"throttled\"")) << agent;
  // Jobs are numbered as their tenants know them, with the tenant beside the number.
  EXPECT_TRUE(Has(agent, "snn_agent_task_budget_ksps{tenant=\"alice\",job=\"1\",task=\"0\"}"))
      << agent;
  EXPECT_TRUE(Has(agent, "snn_agent_board_cores{board=\"0\",type=\"sim-v1\",use=\"live\"} 16"))
      << agent;

  // The shipped Grafana dashboard charts only series the daemons serve.
  std::ifstream dashboard_file(std::string(SNN_SOURCE_DIR) + "/etc/grafana/snn-dashboard.json");
  std::stringstream dashboard;
  dashboard << dashboard_file.rdbuf();
  const std::regex metric_name("snn_[a-z_]+");
  int charted = 0;
  const std::string text = dashboard.str();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), metric_name);
       it != std::sregex_iterator(); ++it, ++charted) {
    const std::string name = it->str();
    EXPECT_TRUE(Has(master, name) || Has(agent, name)) << name << " is charted but not served";
  }
  EXPECT_GE(charted, 15);
}

}  // namespace
}  // namespace snn::testing
