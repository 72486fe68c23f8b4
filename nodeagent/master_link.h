// The agent's one persistent session to the master: connects (and reconnects), registers with
// its boards and every task it holds, sends heartbeats, reports ended tasks until the master
// acknowledges them, and serves the master's launch and kill requests.
// Thread contract: agent io thread only. Timing decisions use the injected Clock; Tick() is
// driven by the agent's timer.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "common/address.h"
#include "common/clock.h"
#include "common/connection.h"
#include "common/rpc_router.h"
#include "nodeagent/task_manager.h"

namespace snn {

struct MasterLinkOptions {
  HostPort master;
  std::string node_name;
  std::vector<std::string> pools;
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  int64_t reconnect_ms = 1000;
};

class MasterLink {
 public:
  MasterLink(asio::io_context& io, const Clock& clock, TaskManager& tasks,
             MasterLinkOptions options);

  // Connects when due, sends a heartbeat when due, and pending task reports.
  void Tick();
  // Something ended: report it now if the session is up.
  void ReportEnded();
  void Stop();
  bool registered() const { return registered_; }

 private:
  void Connect();
  void OnConnected(tcp::socket socket);
  void OnClosed(const Status& why);
  void SendRegister();
  void SendHeartbeat();
  void HeardFromMaster();
  void CheckLease();
  v1::Credential Credential() const;

  // Constant after construction.
  asio::io_context& io_;
  const Clock& clock_;
  TaskManager& tasks_;
  const MasterLinkOptions options_;
  MethodRouter router_;

  // Only on the io thread.
  std::shared_ptr<Connection> session_;
  std::unique_ptr<tcp::socket> connecting_;
  bool registered_ = false;
  bool stopped_ = false;
  bool report_in_flight_ = false;
  int64_t next_connect_ms_ = 0;
  int64_t next_heartbeat_ms_ = 0;
  int64_t heartbeat_interval_ms_ = 1000;
  int64_t lease_ms_ = 0;         // from the master; 0 until the first registration
  int64_t last_contact_ms_ = 0;  // the last answer from the master
  bool lease_expired_ = false;
};

}  // namespace snn
