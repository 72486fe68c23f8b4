#include "nodeagent/agent_metrics.h"

#include <map>
#include <string>

#include "common/daemon/metrics_endpoint.h"

namespace snn {

std::vector<prometheus::MetricFamily> AgentMetrics(const TaskManager& tasks, bool registered) {
  std::vector<prometheus::MetricFamily> out;
  const auto running = tasks.RunningTasks();

  auto connected = GaugeFamily("snn_agent_registered", "1 while registered with the master");
  AddSample(connected, registered ? 1 : 0);
  out.push_back(std::move(connected));

  auto count = GaugeFamily("snn_agent_tasks", "Tasks running on this node");
  AddSample(count, static_cast<double>(running.size()));
  out.push_back(std::move(count));

  auto spikes = CounterFamily("snn_agent_task_spikes_total",
                              "A running task's spikes, by what became of them: admitted into "
                              "the board, throttled by its KSPS budget, delivered, delayed, "
                              "dropped to saturation, refused (outside its cores), output");
  auto rate = GaugeFamily("snn_agent_task_rate_ksps",
                          "A running task's injection rate, thousands of spikes per second");
  auto budget = GaugeFamily("snn_agent_task_budget_ksps", "A running task's KSPS budget");
  struct BoardUse {
    double cores = 0, ksps = 0, streams = 0;
  };
  std::map<uint32_t, BoardUse> board_use;
  for (const auto& t : running) {
    // Jobs as their tenants know them (snnctl shows per-tenant numbers).
    const std::string job = std::to_string(t.tenant_job_id);
    const std::string task = std::to_string(t.key.index);
    const std::pair<const char*, uint64_t> kinds[] = {
        {"admitted", t.usage.injected()},   {"throttled", t.usage.throttled()},
        {"delivered", t.usage.delivered()}, {"delayed", t.usage.delayed()},
        {"dropped", t.usage.dropped()},     {"refused", t.usage.refused()},
        {"output", t.usage.outputs()}};
    for (const auto& [kind, n] : kinds) {
      AddSample(spikes, static_cast<double>(n),
                {{"tenant", t.tenant}, {"job", job}, {"task", task}, {"kind", kind}});
    }
    AddSample(rate, t.usage.rate_ksps(), {{"tenant", t.tenant}, {"job", job}, {"task", task}});
    AddSample(budget, t.resources.ksps(), {{"tenant", t.tenant}, {"job", job}, {"task", task}});
    BoardUse& b = board_use[t.board];
    b.cores += t.resources.cores();
    b.ksps += t.resources.ksps();
    b.streams += t.resources.streams();
  }
  out.push_back(std::move(spikes));
  out.push_back(std::move(rate));
  out.push_back(std::move(budget));

  auto health = GaugeFamily("snn_agent_board_health", "Board health, 0 to 100");
  auto cores = GaugeFamily("snn_agent_board_cores", "Board cores: live, and held by tasks");
  auto ksps = GaugeFamily("snn_agent_board_ksps",
                          "Board spike rate in KSPS: capacity, measured, and budgeted to tasks");
  for (const auto& board : tasks.boards().Describe()) {
    const std::string index = std::to_string(board.index());
    const BoardUse& u = board_use[board.index()];
    AddSample(health, board.health(), {{"board", index}, {"type", board.type()}});
    const double live = static_cast<double>(board.width()) * board.height() -
                        static_cast<double>(board.dead_cores_size());
    AddSample(cores, live, {{"board", index}, {"type", board.type()}, {"use", "live"}});
    AddSample(cores, u.cores, {{"board", index}, {"type", board.type()}, {"use", "held"}});
    AddSample(ksps, board.ksps(), {{"board", index}, {"type", board.type()}, {"use", "capacity"}});
    AddSample(ksps, board.measured_ksps(),
              {{"board", index}, {"type", board.type()}, {"use", "measured"}});
    AddSample(ksps, u.ksps, {{"board", index}, {"type", board.type()}, {"use", "budgeted"}});
  }
  out.push_back(std::move(health));
  out.push_back(std::move(cores));
  out.push_back(std::move(ksps));
  return out;
}

}  // namespace snn
