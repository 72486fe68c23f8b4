#include "master/master_state_metrics.h"

#include <map>
#include <string>
#include <tuple>

#include "common/daemon/metrics_endpoint.h"

namespace snn {
namespace {

std::string Lower(v1::JobState state) {
  std::string name = v1::JobState_Name(state);
  for (char& c : name) c = static_cast<char>(std::tolower(c));
  return name;
}

struct PoolTypeUse {
  double boards_up = 0, boards_drained = 0, boards_down = 0;
  double cores_used = 0, cores_free = 0;
  double ksps_used = 0, ksps_free = 0;
  double streams_used = 0, streams_free = 0;
};

// Jobs live (by state, pool, tenant) and ended (by final state).
void AddJobFamilies(std::vector<prometheus::MetricFamily>& out, const JobTable& jobs,
                    const JobArchive& archive) {
  // Live jobs by (state, pool, tenant).
  std::map<std::tuple<v1::JobState, std::string, std::string>, double> live;
  for (const auto& [id, job] : jobs.jobs()) {
    if (job.state() != v1::PENDING && job.state() != v1::RUNNING) continue;
    live[{job.state(), job.spec().pool(), job.tenant()}] += 1;
  }
  auto family = GaugeFamily("snn_jobs", "Pending and running jobs, by state, pool and tenant");
  for (const auto& [key, n] : live) {
    const auto& [state, pool, tenant] = key;
    AddSample(family, n, {{"state", Lower(state)}, {"pool", pool}, {"tenant", tenant}});
  }
  out.push_back(std::move(family));

  family = CounterFamily("snn_jobs_ended_total", "Jobs that ended, by final state");
  for (v1::JobState s : {v1::COMPLETED, v1::FAILED, v1::CANCELLED, v1::TIMEOUT}) {
    AddSample(family, static_cast<double>(jobs.CountInState(s) + archive.Count(s)),
              {{"state", Lower(s)}});
  }
  out.push_back(std::move(family));
}

// Nodes by state; boards, cores, KSPS and streams by pool and board type.
void AddNodeFamilies(std::vector<prometheus::MetricFamily>& out, const NodeRegistry& nodes) {
  double up = 0, down = 0, draining = 0;
  std::map<std::pair<std::string, std::string>, PoolTypeUse> use;  // (pool, board type)
  for (const auto& [name, node] : nodes.nodes()) {
    const bool node_up = node.up();
    if (!node_up) {
      ++down;
    } else if (!node.record.drain_reason().empty()) {
      ++draining;
    } else {
      ++up;
    }
    for (const auto& board : node.record.boards()) {
      const BoardUsage* u =
          board.index() < node.usage.size() ? &node.usage[board.index()] : nullptr;
      const double cores = LiveCores(board);
      for (const auto& pool : node.record.pools()) {
        PoolTypeUse& p = use[{pool, board.type()}];
        if (!node_up) {
          p.boards_down += 1;
        } else if (!node.DrainReason(board.index()).empty()) {
          p.boards_drained += 1;
        } else {
          p.boards_up += 1;
        }
        const double cores_used = u ? u->cores : 0, ksps_used = u ? u->ksps : 0,
                     streams_used = u ? u->streams : 0;
        p.cores_used += cores_used;
        p.ksps_used += ksps_used;
        p.streams_used += streams_used;
        if (node_up) {
          p.cores_free += std::max(0.0, cores - cores_used);
          p.ksps_free += std::max(0.0, board.ksps() - ksps_used);
          p.streams_free += std::max(0.0, board.streams() - streams_used);
        }
      }
    }
  }
  auto family = GaugeFamily("snn_nodes", "Nodes, by state (up, draining, down)");
  AddSample(family, up, {{"state", "up"}});
  AddSample(family, draining, {{"state", "draining"}});
  AddSample(family, down, {{"state", "down"}});
  out.push_back(std::move(family));

  auto boards = GaugeFamily("snn_boards", "Boards, by pool, board type and state");
  auto cores = GaugeFamily("snn_cores",
                           "Neuromorphic cores used and free (on up nodes), by pool "
                           "and board type");
  auto ksps = GaugeFamily("snn_ksps",
                          "Spike-rate budget in thousands of spikes per second, used "
                          "and free (on up nodes), by pool and board type");
  auto streams = GaugeFamily("snn_streams",
                             "Spike streams used and free (on up nodes), by pool "
                             "and board type");
  for (const auto& [key, p] : use) {
    const std::string& pool = key.first;  // not structured bindings: the lambda uses them
    const std::string& type = key.second;
    auto labels = [&](const char* name, const char* value) {
      return std::vector<prometheus::ClientMetric::Label>{
          {"pool", pool}, {"type", type}, {name, value}};
    };
    AddSample(boards, p.boards_up, labels("state", "up"));
    AddSample(boards, p.boards_drained, labels("state", "drained"));
    AddSample(boards, p.boards_down, labels("state", "down"));
    AddSample(cores, p.cores_used, labels("use", "used"));
    AddSample(cores, p.cores_free, labels("use", "free"));
    AddSample(ksps, p.ksps_used, labels("use", "used"));
    AddSample(ksps, p.ksps_free, labels("use", "free"));
    AddSample(streams, p.streams_used, labels("use", "used"));
    AddSample(streams, p.streams_free, labels("use", "free"));
  }
  out.push_back(std::move(boards));
  out.push_back(std::move(cores));
  out.push_back(std::move(ksps));
  out.push_back(std::move(streams));
}

// Each tenant's credits, charges and budget alerts.
void AddTenantFamilies(std::vector<prometheus::MetricFamily>& out, const BillingLedger& billing) {
  auto credit = GaugeFamily("snn_tenant_credit", "A tenant's credits, in its currency");
  auto charged =
      GaugeFamily("snn_tenant_charged", "A tenant's charges at list prices, in its currency");
  auto held = GaugeFamily("snn_tenant_budget_exhausted",
                          "1 while a tenant's charges have reached its credits (its jobs wait)");
  auto alerts = GaugeFamily("snn_tenant_budget_alerts",
                            "How many of the policy's alert_at fractions of its credits a "
                            "tenant has used (each also logged once as it is crossed)");
  for (const auto& [tenant, a] : billing.accounts()) {
    AddSample(alerts, a.alerts_raised(), {{"tenant", tenant}});
    AddSample(credit, static_cast<double>(a.credit_micros()) / 1e6, {{"tenant", tenant}});
    AddSample(charged, static_cast<double>(a.charged_micros()) / 1e6, {{"tenant", tenant}});
    AddSample(held, a.charged_micros() >= a.credit_micros() ? 1 : 0, {{"tenant", tenant}});
  }
  out.push_back(std::move(credit));
  out.push_back(std::move(charged));
  out.push_back(std::move(held));
  out.push_back(std::move(alerts));
}

}  // namespace

std::vector<prometheus::MetricFamily> MasterStateMetrics(const JobTable& jobs,
                                                         const JobArchive& archive,
                                                         const NodeRegistry& nodes,
                                                         const BillingLedger& billing) {
  std::vector<prometheus::MetricFamily> out;
  AddJobFamilies(out, jobs, archive);
  AddNodeFamilies(out, nodes);
  AddTenantFamilies(out, billing);
  return out;
}

}  // namespace snn
