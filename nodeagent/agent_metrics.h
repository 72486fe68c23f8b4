// The agent's state as Prometheus metrics, computed at a scrape on the agent's io thread:
// running tasks; per task, its spikes admitted and held back by its KSPS budget (and the rest
// of its counters) and its injection rate; per board, health, capacity and what tasks hold;
// whether the agent is registered with the master. Per-task series exist while the task runs.
#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "nodeagent/tasks/task_manager.h"

namespace snn {

std::vector<prometheus::MetricFamily> AgentMetrics(const TaskManager& tasks, bool registered);

}  // namespace snn
