// Assembles the node agent: its boards, the task manager, the session to the master, a tick
// timer, and SIGCHLD/SIGTERM handling.
// Thread contract: Start and Run on one thread (the io thread); Stop from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/daemon/metrics_endpoint.h"
#include "common/daemon/service_notify.h"
#include "common/rpc/clock_timer.h"
#include "nodeagent/master_link.h"
#include "nodeagent/tasks/task_manager.h"

namespace snn {

struct AgentConfig {
  MasterLinkOptions link;
  TaskManagerOptions tasks;
  int64_t tick_ms = 100;
  bool handle_signals = false;
  bool stop_tasks_on_exit = false;  // else tasks outlive the agent and a new one re-attaches
  int64_t stop_wait_ms = 3000;      // how long Stop waits for killed tasks to go
  std::string gateway_socket;       // the spike gateway's Unix socket; empty: no gateway
  bool fingerprint_boards = true;   // measure each board at start
  std::string metrics_listen;       // HOST:PORT of the Prometheus endpoint; empty: none
  std::string metrics_port_file;    // if set, its bound port is written here
};

class Agent {
 public:
  Agent(AgentConfig config, const Clock& clock, std::vector<std::unique_ptr<Board>> boards);

  // Opens the spike gateway, measures the boards, re-attaches to earlier tasks.
  Status Start();
  // Serves until Stop. Tasks keep running unless stop_tasks_on_exit.
  void Run();
  void Stop();

 private:
  void Tick();
  void WatchChildren();
  // Stopping: polls until every task is gone or `deadline_ms` passes, then FinishStop.
  void FinishStopOnceTasksAreGone(int64_t deadline_ms);
  void FinishStop();
  std::string StatusLine() const;

  const AgentConfig config_;  // constant after construction
  const Clock& clock_;
  asio::io_context io_;
  std::unique_ptr<SpikeGateway> gateway_;
  TaskManager tasks_;
  MasterLink link_;
  ClockTimer tick_timer_;
  ClockTimer stop_timer_;
  ServiceNotifier notify_;  // systemd: READY, STATUS, watchdog pings from this loop
  std::string last_status_;
  asio::signal_set child_signals_;
  asio::signal_set stop_signals_;
  std::atomic<bool> stopping_{false};
  // Last: its scrapes read the members above, so it goes first.
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;
};

}  // namespace snn
