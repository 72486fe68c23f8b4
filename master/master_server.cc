#include "master/master_server.h"

#include <glog/logging.h>

#include <fstream>

namespace snn {

MasterServer::MasterServer(MasterConfig config, const Clock& clock, std::unique_ptr<Store> store)
    : config_(std::move(config)),
      clock_(clock),
      store_(std::move(store)),
      journal_(*store_, [this](std::function<void()> fn) { asio::post(io_, std::move(fn)); }),
      agent_channel_(nodes_),
      controller_(jobs_, nodes_, agent_channel_, journal_, clock_, config_.controller,
                  [this] { RequestSchedule(); }),
      clients_(jobs_, nodes_, journal_, controller_, clock_),
      agents_(nodes_, journal_, controller_, clock_, config_.agents),
      admin_(nodes_, journal_, [this] { RequestSchedule(); }),
      policy_(controller_, journal_, [this] { RequestSchedule(); }),
      server_(
          io_, config_.max_frame_bytes,
          [this](const std::shared_ptr<Connection>& c, v1::Envelope e) {
            router_.Dispatch(c, std::move(e));
          },
          [this](const std::shared_ptr<Connection>& c, const Status& why) {
            const std::string node = nodes_.OnSessionClosed(c.get());
            if (!node.empty())
              LOG(WARNING) << "node " << node << " disconnected: " << why.ToString();
          }),
      tick_timer_(io_, clock_),
      signals_(io_) {
  clients_.Register(router_);
  agents_.Register(router_);
  admin_.Register(router_);
  policy_.Register(router_);
}

MasterServer::~MasterServer() { store_->Close(); }

Status MasterServer::Recover() {
  auto records = store_->LoadAll();
  if (!records.ok()) return records.status();
  size_t job_count = 0;
  for (const auto& [key, value] : *records) {
    if (key.rfind(kNodeKeyPrefix, 0) == 0) {
      v1::NodeRecord node;
      if (!node.ParseFromString(value)) return Internal("corrupt node record " + key);
      nodes_.Restore(std::move(node), clock_.NowMs());
    }
  }
  for (const auto& [key, value] : *records) {
    if (key.rfind(kJobKeyPrefix, 0) == 0) {
      v1::JobRecord job;
      if (!job.ParseFromString(value)) return Internal("corrupt job record " + key);
      jobs_.Restore(std::move(job));
      ++job_count;
    }
  }
  for (const auto& [key, value] : *records) {
    if (key != kPolicyKey) continue;
    v1::SchedulingConfig stored;  // an admin's changes outlive restarts; the file seeds it
    if (!stored.ParseFromString(value)) return Internal("corrupt policy record");
    controller_.SetScheduling(stored);
    LOG(INFO) << "scheduling policy from the store (admin changes kept; --policy_file not read)";
  }
  controller_.RecoverReservations();
  LOG(INFO) << "recovered " << job_count << " jobs and " << nodes_.nodes().size() << " nodes";
  return Status::Ok();
}

Status MasterServer::Start() {
  SNN_RETURN_IF_ERROR(Recover());
  SNN_RETURN_IF_ERROR(server_.Listen(config_.listen));
  LOG(INFO) << "snn-master listening on " << config_.listen.host << ":" << server_.port();
  if (!config_.port_file.empty()) {
    const std::string tmp = config_.port_file + ".tmp";
    {
      std::ofstream out(tmp);
      out << server_.port() << "\n";
      if (!out) return Unavailable("cannot write the port file " + tmp);
    }
    if (std::rename(tmp.c_str(), config_.port_file.c_str()) != 0) {
      return Unavailable("cannot write the port file " + config_.port_file);
    }
  }
  if (config_.handle_signals) {
    signals_.add(SIGTERM);
    signals_.add(SIGINT);
    signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (!ec) Stop();
    });
  }
  Tick();
  RequestSchedule();
  return Status::Ok();
}

void MasterServer::RequestSchedule() {
  if (schedule_posted_ || stopping_) return;
  schedule_posted_ = true;
  asio::post(io_, [this] {
    schedule_posted_ = false;
    if (!stopping_) controller_.RunSchedulingPass();
  });
}

void MasterServer::Tick() {
  for (const auto& node : nodes_.ExpireHeartbeats(clock_.NowMs(), config_.heartbeat_timeout_ms)) {
    const std::string reason = nodes_.Find(node)->down_reason;
    LOG(WARNING) << "node " << node << " is DOWN: " << reason << "; requeueing its jobs";
    controller_.OnNodeDown(node, reason);
  }
  // Ages grow, grace periods pass and reservations come due without any event: pass anyway.
  const int64_t now = clock_.NowMs();
  if (config_.schedule_interval_ms > 0 &&
      now - last_periodic_pass_ms_ >= config_.schedule_interval_ms) {
    last_periodic_pass_ms_ = now;
    RequestSchedule();
  }
  tick_timer_.WaitMs(config_.tick_ms, [this](bool expired) {
    if (expired && !stopping_) Tick();
  });
}

void MasterServer::Run() {
  io_.run();
  // Let every queued write become durable before the process ends.
  store_->Close();
}

void MasterServer::Stop() {
  asio::post(io_, [this] {
    if (stopping_.exchange(true)) return;
    LOG(INFO) << "snn-master stopping";
    server_.Stop();
    tick_timer_.Cancel();
    signals_.cancel();
    journal_.Commit([this] { io_.stop(); });
  });
}

}  // namespace snn
