// Assembles the master: the store, the job table and node registry rebuilt from it, the
// job machinery (master/jobs/job_components.h), the client and agent services, the RPC server,
// and a tick that checks heartbeats.
// Thread contract: Start and Run on one thread (the io thread); Stop from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "common/base/clock.h"
#include "common/daemon/metrics_endpoint.h"
#include "common/daemon/service_notify.h"
#include "common/rpc/address.h"
#include "common/rpc/clock_timer.h"
#include "common/rpc/rpc_server.h"
#include "master/auth/authenticator.h"
#include "master/billing/billing_ledger.h"
#include "master/http/http_server.h"
#include "master/http/rest_api.h"
#include "master/jobs/job_components.h"
#include "master/jobs/pass_cadence.h"
#include "master/metrics/master_metrics.h"
#include "master/services/admin_service.h"
#include "master/services/agent_service.h"
#include "master/services/billing_service.h"
#include "master/services/client_service.h"
#include "master/services/enrol_service.h"
#include "master/services/experiment_service.h"
#include "master/services/policy_service.h"
#include "master/services/replica_service.h"
#include "master/services/reservation_service.h"
#include "master/services/token_service.h"
#include "master/store/store.h"

namespace snn {

struct MasterConfig {
  HostPort listen{"127.0.0.1", 7130};
  std::string port_file;  // if set, the bound port is written here once listening
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  int64_t heartbeat_timeout_ms = 15000;
  int64_t tick_ms = 200;
  int64_t schedule_interval_ms = 1000;  // a scheduling pass at least this often (0: on events only)
  PassCadenceOptions schedule_cadence;  // how soon a pass follows the events that ask for one
  bool handle_signals = false;          // stop cleanly on SIGTERM and SIGINT
  JobOptions jobs;
  AgentServiceOptions agents;
  // "munge": users prove their uid with MUNGE, agents their node with a certificate, all over
  // TLS. "none": plain TCP, claims believed (development on one host; loopback only).
  std::string auth = "munge";
  std::string tls_dir = "/etc/snn/tls";  // ca.crt, ca.key, master.crt, master.key
  std::string munge_socket;              // empty: munged's default
  int64_t node_cert_validity_s = 30 * 86400;
  ServerLimits limits;  // connections, timeouts, accept back-off
  // Re-read on SIGHUP (with handle_signals): it becomes the policy, replacing the stored one.
  std::string policy_file;
  std::string metrics_listen;     // HOST:PORT of the Prometheus endpoint; empty: none
  std::string metrics_port_file;  // if set, its bound port is written here
  // HOST:PORT of the HTTP API (docs/reference/http-api.md): HTTPS with the master's certificate,
  // plain HTTP only with --auth=none (loopback); empty: none.
  std::string http_listen;
  std::string http_port_file;  // if set, its bound port is written here
  HttpLimits http_limits;
  ModelUploadConfig model_uploads;  // jobs uploaded with their model (master/http/model_upload.h)
  // --ha_etcd: the master starts as a standby that answers every request with a redirect to
  // the leader this gives (HOST:PORT, "" when none is known), until Promote.
  std::function<std::string()> standby_leader;
};

class MasterServer {
 public:
  MasterServer(MasterConfig config, const Clock& clock, std::unique_ptr<Store> store);
  ~MasterServer();

  // Rebuilds state from the store and starts listening (a standby only listens).
  Status Start();
  // A standby becomes the leader: rebuilds state from the store (which now holds everything
  // the previous leader wrote) and serves. From any thread; a failure ends the process.
  void Promote();
  // Serves until Stop; then finishes durable writes in flight.
  void Run();
  void Stop();
  uint16_t port() const { return server_.port(); }
  uint16_t metrics_port() const { return metrics_endpoint_ ? metrics_endpoint_->port() : 0; }
  uint16_t http_port() const { return http_ ? http_->port() : 0; }
  // Every method the master serves, with the right it needs.
  const MethodRouter& router() const { return router_; }

 private:
  void RequestSchedule();
  void RunPass();
  void Tick();
  Status Recover();
  Status SetUpAuth();
  // Called by the constructor: the services on the router, and what observes them.
  void RegisterServices();
  void ObserveAndPublish();
  Status StartHttp();
  std::string StatusLine() const;
  // SIGHUP: the policy file again, checked; what changed is logged, and a bad file changes
  // nothing.
  void ReloadPolicy();
  void WaitForReload();

  // Constant after construction.
  const MasterConfig config_;
  const Clock& clock_;

  asio::io_context io_;
  MasterMetrics metrics_;
  std::unique_ptr<Store> store_;
  Journal journal_;
  JobTable jobs_;
  JobArchive archive_;
  NodeRegistry nodes_;
  NodeApprovals approvals_;  // what nodes may declare; their certificates' generations
  SessionAgentChannel agent_channel_;
  JobComponents job_components_;
  ExperimentBook experiments_;
  ClientService clients_;
  ExperimentService experiment_service_;
  AgentService agents_;
  AdminService admin_;
  PolicyService policy_;
  EnrolService enrol_;
  ReplicaService replica_;  // HA: what the leader serves its standbys
  ReservationService reservations_;
  BillingLedger billing_;
  BillingService billing_service_;
  TokenService access_tokens_;
  MethodRouter router_;
  Authenticator auth_;
  RpcServer server_;
  EventHub events_;  // the HTTP API's event fan-out
  std::unique_ptr<RestApi> rest_;
  std::unique_ptr<HttpServer> http_;
  ClockTimer tick_timer_;
  ServiceNotifier notify_;  // systemd: READY, STATUS, watchdog pings from this loop
  asio::signal_set signals_;
  asio::signal_set reload_signals_;     // SIGHUP
  asio::steady_timer pass_timer_;       // real time: see master/pass_cadence.h
  asio::steady_timer full_pass_timer_;  // a full pass after quick ones
  PassCadence cadence_;
  bool schedule_wanted_ = false;  // only on the io thread
  int64_t last_periodic_pass_ms_ = 0;
  int64_t last_status_ms_ = 0;
  std::atomic<bool> stopping_{false};
  bool standby_ = false;  // only on the io thread
  // Last: its scrapes read the members above, so it goes first.
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;
};

}  // namespace snn
