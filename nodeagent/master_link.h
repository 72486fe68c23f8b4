// The agent's one persistent session to the master: connects (and reconnects), registers with
// its boards and every task it holds, sends heartbeats, reports ended tasks until the master
// acknowledges them, and serves the master's launch and kill requests and experiment services'
// turns (nodeagent/experiments/experiment_runner.h).
// Thread contract: agent io thread only. Timing decisions use the injected Clock; Tick() is
// driven by the agent's timer.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/rpc/address.h"
#include "common/rpc/connection.h"
#include "common/rpc/rpc_router.h"
#include "nodeagent/experiments/experiment_runner.h"
#include "nodeagent/node_credentials.h"
#include "nodeagent/tasks/task_manager.h"

namespace snn {

struct MasterLinkOptions {
  std::vector<HostPort> masters;  // one, or every master of an HA group (the leader is found)
  std::string node_name;
  std::vector<std::string> pools;
  std::string switch_name;           // topology from the boards file, sent at registration
  std::vector<v1::BoardLink> links;  // to_node empty: on this node
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  int64_t reconnect_ms = 1000;
  // TLS with the node's certificate (enrolling first with `join_token` when it has none);
  // false: plain TCP, for a master running with --auth=none.
  bool tls = true;
  std::string tls_dir;
  std::string join_token;
  // Read again at each enrolment, so that a new token placed there is used (after a revocation,
  // say) without a restart; it wins over `join_token`.
  std::string join_token_file;
};

class MasterLink {
 public:
  MasterLink(asio::io_context& io, const Clock& clock, TaskManager& tasks,
             MasterLinkOptions options);

  // Connects when due, sends a heartbeat when due, and pending task reports.
  void Tick();
  // Something ended: report it now if the session is up.
  void ReportEnded();
  // A board's health changed (a driver's check): the master hears the boards again.
  void BoardsChanged();
  void Stop();
  bool registered() const { return registered_; }

 private:
  void Connect();
  // The master to connect to next: the leader a standby named, else the current one of the list.
  const HostPort& target() const { return redirect_ ? *redirect_ : options_.masters[current_]; }
  // Moves on to the next master of the list (or to the leader `refusal` names).
  void NextMaster(const Status& refusal = Status::Ok());
  void StartTls(tcp::socket socket);
  // The master refused this node's certificate as revoked.
  void CertificateRevoked(const Status& why);
  void OnConnected(std::shared_ptr<Connection> session);
  void SendEnrol();
  void MaybeRenew();
  void RetryLater();
  void OnClosed(const Status& why);
  void SendRegister();
  void SendHeartbeat();
  void HeardFromMaster();
  void CheckLease();
  // How long a registered session may go without an answer before it is given up.
  int64_t SilenceLimitMs() const;
  // Closes a connection attempt that hangs, or a session whose master went silent.
  void GiveUpSilentPeers(int64_t now);
  static constexpr int64_t kAttemptTimeoutMs = 3000;
  v1::Credential Credential() const;

  // Constant after construction.
  asio::io_context& io_;
  const Clock& clock_;
  TaskManager& tasks_;
  const MasterLinkOptions options_;
  MethodRouter router_;
  ExperimentRunner experiments_;

  // Only on the io thread.
  std::shared_ptr<Connection> session_;
  size_t current_ = 0;                // index into options_.masters
  std::optional<HostPort> redirect_;  // the leader a standby named
  bool keep_next_connect_ = false;    // a redirect set when to connect; closing keeps it
  std::unique_ptr<tcp::socket> connecting_;
  std::unique_ptr<TlsStream> handshaking_;
  std::shared_ptr<ssl::context> tls_context_;
  NodeCredentials credentials_;
  bool enrolling_ = false;  // this session has no certificate: it enrols, then reconnects
  bool renewing_ = false;
  bool registered_ = false;
  bool stopped_ = false;
  bool report_in_flight_ = false;
  int64_t next_connect_ms_ = 0;
  int64_t next_heartbeat_ms_ = 0;
  int64_t heartbeat_interval_ms_ = 1000;
  int64_t lease_ms_ = 0;            // from the master; 0 until the first registration
  int64_t last_contact_ms_ = 0;     // the last answer from the master
  int64_t attempt_started_ms_ = 0;  // when the connection being made was begun
  bool lease_expired_ = false;
};

}  // namespace snn
