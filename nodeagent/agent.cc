#include "nodeagent/agent.h"

#include <glog/logging.h>

#include "nodeagent/agent_metrics.h"

namespace snn {

Agent::Agent(AgentConfig config, const Clock& clock, std::vector<std::unique_ptr<Board>> boards)
    : config_(std::move(config)),
      clock_(clock),
      gateway_(config_.gateway_socket.empty()
                   ? nullptr
                   : std::make_unique<SpikeGateway>(clock, config_.gateway_socket)),
      tasks_(clock, std::move(boards), config_.tasks, gateway_.get()),
      link_(io_, clock, tasks_, config_.link),
      tick_timer_(io_, clock),
      stop_timer_(io_, clock),
      notify_(io_),
      child_signals_(io_, SIGCHLD),
      stop_signals_(io_) {
  // A network built (on the builder's thread), a driver's answer: the next Poll, made now,
  // takes it.
  auto wake = [this] {
    asio::post(io_, [this] {
      if (!stopping_) tasks_.Poll();
    });
  };
  tasks_.set_calls({[this] { link_.ReportEnded(); }, [this] { link_.BoardsChanged(); }, wake});
  if (config_.tasks.drivers != nullptr) config_.tasks.drivers->Serve(wake);
}

Status Agent::Start() {
  if (gateway_) SNN_RETURN_IF_ERROR(gateway_->Start());
  if (config_.fingerprint_boards) tasks_.boards().Fingerprint();
  tasks_.Recover();
  if (config_.handle_signals) {
    stop_signals_.add(SIGTERM);
    stop_signals_.add(SIGINT);
    stop_signals_.async_wait([this](const boost::system::error_code& ec, int) {
      if (!ec) Stop();
    });
  }
  if (!config_.metrics_listen.empty()) {
    auto endpoint = MetricsEndpoint::Start(
        config_.metrics_listen, io_, std::make_shared<prometheus::Registry>(),
        [this] { return AgentMetrics(tasks_, link_.registered()); });
    if (!endpoint.ok()) return endpoint.status();
    metrics_endpoint_ = std::move(endpoint).value();
    LOG(INFO) << "metrics on port " << metrics_endpoint_->port() << " (" << config_.metrics_listen
              << ")";
    if (!config_.metrics_port_file.empty()) {
      SNN_RETURN_IF_ERROR(WritePortFile(config_.metrics_port_file, metrics_endpoint_->port()));
    }
  }
  WatchChildren();
  Tick();
  notify_.Start();
  notify_.Ready(StatusLine());
  return Status::Ok();
}

void Agent::WatchChildren() {
  child_signals_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec || stopping_) return;
    tasks_.Poll();
    WatchChildren();
  });
}

void Agent::Tick() {
  tasks_.Poll();
  link_.Tick();
  if (std::string status = StatusLine(); status != last_status_) {
    notify_.Status(status);
    last_status_ = std::move(status);
  }
  tick_timer_.WaitMs(config_.tick_ms, [this](bool expired) {
    if (expired && !stopping_) Tick();
  });
}

std::string Agent::StatusLine() const {
  return std::to_string(tasks_.active_count()) + " tasks running; " +
         (link_.registered() ? "registered with the master" : "connecting to the master");
}

void Agent::Run() { io_.run(); }

void Agent::Stop() {
  asio::post(io_, [this] {
    if (stopping_.exchange(true)) return;
    tick_timer_.Cancel();
    notify_.Stopping();
    notify_.Cancel();
    if (config_.stop_tasks_on_exit) {
      LOG(INFO) << "snn-agent stopping; stopping " << tasks_.active_count() << " tasks";
      tasks_.KillAll();
      FinishStopOnceTasksAreGone(clock_.NowMs() + config_.stop_wait_ms);
    } else {
      LOG(INFO) << "snn-agent stopping; " << tasks_.active_count()
                << " tasks keep running for the next agent to re-attach";
      FinishStop();
    }
  });
}

void Agent::FinishStopOnceTasksAreGone(int64_t deadline_ms) {
  tasks_.Poll();
  if (tasks_.active_count() == 0 || clock_.NowMs() >= deadline_ms) return FinishStop();
  stop_timer_.WaitMs(5, [this, deadline_ms](bool) { FinishStopOnceTasksAreGone(deadline_ms); });
}

void Agent::FinishStop() {
  link_.Stop();
  if (gateway_) gateway_->Stop();
  child_signals_.cancel();
  stop_signals_.cancel();
  io_.stop();
}

}  // namespace snn
