// snn-master: the cluster's master daemon. Flags may come from a file: --flagfile=PATH.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "common/base/clock.h"
#include "common/daemon/daemon_init.h"
#include "common/model/nir_import_process.h"
#include "master/ha_master.h"
#include "master/master_server.h"
#include "master/policy/policy_file.h"
#include "master/store/rocks_store.h"

DEFINE_string(listen, "127.0.0.1:7130", "address to listen on (HOST:PORT; port 0 picks one)");
DEFINE_string(metrics_listen, "127.0.0.1:7131",
              "serve Prometheus metrics at http://HOST:PORT/metrics (port 0 picks one; empty: "
              "no endpoint). Loopback by default: the metrics name tenants and nodes");
DEFINE_string(metrics_port_file, "", "write the metrics endpoint's bound port to this file");
DEFINE_string(http_listen, "127.0.0.1:7133",
              "serve the HTTP API at HOST:PORT (HTTPS with the master's certificate; plain HTTP "
              "with --auth=none, loopback only; port 0 picks one; empty: no API)");
DEFINE_string(http_port_file, "", "write the HTTP API's bound port to this file");
DEFINE_uint32(http_max_connections, 4096, "HTTP API connections open at once, in all");
DEFINE_uint32(http_max_per_user, 64,
              "HTTP API connections of one user (by token) from one IP address; more are "
              "refused with that reason, and the address's other users are not affected");
DEFINE_int64(http_anonymous_timeout_s, 10,
             "an HTTP API connection that has carried no accepted token is closed this long after "
             "it opened (the web page and the API's document need none)");
DEFINE_uint32(http_max_anonymous_per_address, 64,
              "HTTP API connections from one IP address that carry no accepted token yet; one "
              "more closes the oldest of them (each is closed 10 s after it opened)");
DEFINE_uint32(http_max_upload_mb, 64,
              "largest job form upload (a job with its NIR or JSON model) over the HTTP API, in "
              "MiB; a user sends one at a time");
DEFINE_string(nir_import, "",
              "the snn-nir-import program that reads uploaded NIR models (default: the one beside "
              "snn-master; installed with snnctl)");
DEFINE_uint32(nir_import_cpu_s, 60, "CPU seconds snn-nir-import may spend on one uploaded model");
DEFINE_uint32(nir_import_memory_mb, 2048, "address space of snn-nir-import on an uploaded model");
DEFINE_string(data_dir, "/var/lib/snn/master", "directory of the master's state store");
DEFINE_string(port_file, "", "write the bound port to this file once listening");
DEFINE_uint64(max_frame_bytes, 4 << 20, "largest accepted frame; larger ones close the connection");
DEFINE_int64(heartbeat_interval_ms, 1000, "how often agents are asked to send heartbeats");
DEFINE_int64(heartbeat_timeout_ms, 15000,
             "a node without a heartbeat this long is DOWN and its jobs are requeued");
DEFINE_int64(agent_lease_ms, 0,
             "an agent cut off from the master this long stops its tasks; must be shorter than "
             "--heartbeat_timeout_ms (0: half of it)");
DEFINE_uint32(auto_drain_health_below, 50,
              "drain boards whose health falls below this (0-100; 0: never), resume them when "
              "healthy again");
DEFINE_string(policy_file, "",
              "YAML scheduling policy (queues, tenants, quotas, priority weights, billing; see "
              "etc/policy.yaml), read at the first start; later the stored policy, with admins' "
              "changes, is used. SIGHUP re-reads it and makes it the policy (admins' changes "
              "since are replaced), logging what changed; a bad file changes nothing. Empty: "
              "the built-in default");
DEFINE_int64(schedule_interval_ms, 1000,
             "a scheduling pass at least this often, besides the passes events trigger "
             "(ages grow, grace periods pass); 0: on events only");
DEFINE_double(schedule_max_busy, 0.25,
              "the largest share of the master's io thread scheduling passes may take: after a "
              "pass of d ms the next waits d x (1 - share) / share ms, so a deep queue makes "
              "passes rarer, never requests slower (0.01 to 1)");
DEFINE_int64(schedule_min_gap_ms, 0,
             "and at least this many ms between the end of a pass and the start of the next");
DEFINE_uint64(schedule_quick_depth, 1000,
              "with more jobs than this pending, a pass between two full ones considers only "
              "this many at the head of the queue, first come first served (a submit costs no "
              "pass over the whole queue); the rest wait for the next full pass, which backfills. "
              "0: every pass is full");
DEFINE_int64(schedule_full_interval_ms, 1000,
             "with quick passes, a full pass (every pending job, backfill, elastic growth, wait "
             "reasons) at least this often");
DEFINE_string(default_pool, "default", "pool of jobs that name none");
DEFINE_string(default_queue, "default", "queue of jobs that name none");
DEFINE_uint64(default_time_limit_s, 3600, "time limit of jobs that set none, seconds");
DEFINE_uint32(session_keepalive_s, 60,
              "a session (snnctl alloc) not renewed for this long is ended, if it names no "
              "keepalive of its own; seconds");
DEFINE_uint64(max_time_limit_s, 7 * 86400, "largest time limit a job may ask for, seconds");
DEFINE_double(unit_ksps, 1000,
              "1 normalized throughput unit (a job's `units:`), in measured KSPS, when no "
              "--unit_board_type is given or none of its boards is measured yet");
DEFINE_string(unit_board_type, "",
              "the reference board type: 1 unit is the median measured KSPS of its boards");
DEFINE_string(auth, "munge",
              "munge: users prove their uid with MUNGE and nodes their name with a certificate "
              "signed by the cluster's CA, all over TLS 1.3; none: plain TCP and claimed names "
              "believed (development only; loopback addresses only)");
DEFINE_string(tls_dir, "/etc/snn/tls",
              "the master's TLS files: ca.crt, master.crt, master.key, and ca.key to sign the "
              "certificates of nodes that enrol with a join token (made by snn-ca)");
DEFINE_uint64(max_connections, 4096, "open connections in all; more are closed at once");
DEFINE_uint64(max_connections_per_user, 256,
              "open connections of one user (or node) from one IP address; more are refused with "
              "that reason, and other users of the address are not affected");
DEFINE_uint64(max_anonymous_connections_per_peer, 64,
              "connections from one IP address that have not yet proven who they are (TLS "
              "handshake, first credential); one more closes the oldest of them");
DEFINE_int64(auth_timeout_s, 60,
             "a connection that has not proven who it is this long after it was accepted is "
             "closed");
DEFINE_int64(idle_timeout_s, 600,
             "a connection on which nothing is read or written this long is closed (agents "
             "heartbeat far more often)");
DEFINE_int64(frame_timeout_s, 30,
             "a request whose header came must arrive whole within this, and a TLS handshake "
             "within a third of it");
DEFINE_string(munge_socket, "", "munged's socket (empty: munge's default)");
DEFINE_string(
    ha_etcd, "",
    "high availability: etcd endpoints (HOST:PORT,..., or https://HOST:PORT,... for TLS); "
    "masters given the same list and "
    "--ha_prefix elect a leader, the others stand by and redirect (empty: one master)");
DEFINE_string(ha_prefix, "/snn/", "HA: the etcd key prefix of this cluster's masters");
DEFINE_string(ha_etcd_ca, "",
              "HA with https:// endpoints: the CA certificate of etcd's members (empty: the "
              "system's roots)");
DEFINE_string(ha_etcd_cert, "",
              "HA with https:// endpoints: this master's client certificate for etcd (with "
              "--client-cert-auth on etcd), with --ha_etcd_key");
DEFINE_string(ha_etcd_key, "", "HA: the key of --ha_etcd_cert");
DEFINE_string(ha_name, "", "HA: this master's name in the group (default: the host name)");
DEFINE_string(ha_advertise, "",
              "HA: HOST:PORT that agents and clients reach this master at (default: --listen)");
DEFINE_int64(ha_lease_s, 5,
             "HA: the leader's etcd lease, seconds; a standby takes over this long after the "
             "leader dies, and a leader cut off from etcd stops before then");
DEFINE_uint64(ha_log_batches, 50000,
              "HA: batches the leader keeps in etcd for a standby that is away; one that falls "
              "further behind copies the leader's store (a snapshot) when it comes back");
DEFINE_uint32(ha_max_in_flight, 1,
              "HA: groups of writes in etcd transactions at once (1 to 64), acknowledged in "
              "order. More helps when etcd's members are on other hosts (each round waits on the "
              "network); 1 is fastest when they share this host's CPUs (docs/benchmarks.md)");
DEFINE_int64(node_cert_validity_s, 30 * 86400,
             "lifetime of the certificates the master signs for nodes; agents renew them when "
             "two thirds have passed");

namespace {

// What a takeover needs beyond the dead leader's lease: the election, the log's tail, the
// state's rebuild and the agents' re-registration.
constexpr int64_t kTakeoverMs = 5000;

int RunHa(snn::MasterConfig config, std::unique_ptr<snn::Store> store) {
  snn::HaMasterOptions ha;
  ha.etcd_endpoints = FLAGS_ha_etcd;
  ha.etcd_tls = {FLAGS_ha_etcd_ca, FLAGS_ha_etcd_cert, FLAGS_ha_etcd_key};
  ha.member.prefix = FLAGS_ha_prefix;
  ha.member.member = FLAGS_ha_name;
  if (ha.member.member.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    ha.member.member = host;
  }
  ha.member.advertise = FLAGS_ha_advertise;
  if (ha.member.advertise.empty() &&
      (config.listen.host == "0.0.0.0" || config.listen.host == "::")) {
    LOG(ERROR) << "--ha_advertise is needed: --listen=" << FLAGS_listen
               << " is not an address others can reach this master at";
    return 2;
  }
  if (auto a = snn::ParseHostPort(ha.member.advertise); !ha.member.advertise.empty() && !a.ok()) {
    LOG(ERROR) << "--ha_advertise: " << a.status().message();
    return 2;
  }
  if (FLAGS_ha_lease_s < 2 || FLAGS_ha_lease_s > 600) {
    LOG(ERROR) << "--ha_lease_s must be between 2 and 600";
    return 2;
  }
  ha.member.lease_ttl_s = FLAGS_ha_lease_s;
  if (FLAGS_auth != "none") ha.member.tls_dir = FLAGS_tls_dir;
  if (FLAGS_ha_log_batches < 100) {
    LOG(ERROR) << "--ha_log_batches must be at least 100";
    return 2;
  }
  ha.member.max_log_batches = FLAGS_ha_log_batches;
  if (FLAGS_ha_max_in_flight < 1 || FLAGS_ha_max_in_flight > 64) {
    LOG(ERROR) << "--ha_max_in_flight must be between 1 and 64";
    return 2;
  }
  ha.max_in_flight = FLAGS_ha_max_in_flight;
  if (FLAGS_ha_prefix.empty() || FLAGS_ha_prefix.back() != '/') {
    LOG(ERROR) << "--ha_prefix must end with '/'";
    return 2;
  }
  return snn::RunHaMaster(std::move(config), std::move(store), std::move(ha));
}

// How agents are watched: heartbeats and the lease that stops their tasks, longer than a takeover.
bool FillAgentTerms(snn::MasterConfig& config) {
  if (!FLAGS_ha_etcd.empty() &&
      gflags::GetCommandLineFlagInfoOrDie("heartbeat_timeout_ms").is_default) {
    // A takeover takes the lease and a few seconds more: agents must not give up before.
    FLAGS_heartbeat_timeout_ms =
        std::max<int64_t>(FLAGS_heartbeat_timeout_ms, 2 * (FLAGS_ha_lease_s * 1000 + kTakeoverMs));
  }
  config.heartbeat_timeout_ms = FLAGS_heartbeat_timeout_ms;
  config.agents.heartbeat_interval_ms = FLAGS_heartbeat_interval_ms;
  config.agents.lease_ms =
      FLAGS_agent_lease_ms > 0 ? FLAGS_agent_lease_ms : FLAGS_heartbeat_timeout_ms / 2;
  if (config.agents.lease_ms >= FLAGS_heartbeat_timeout_ms ||
      FLAGS_heartbeat_interval_ms >= FLAGS_heartbeat_timeout_ms) {
    LOG(ERROR) << "--agent_lease_ms and --heartbeat_interval_ms must be shorter than "
                  "--heartbeat_timeout_ms, or a cut-off task could run twice";
    return false;
  }
  if (!FLAGS_ha_etcd.empty() && config.agents.lease_ms < FLAGS_ha_lease_s * 1000 + kTakeoverMs) {
    LOG(ERROR) << "with --ha_etcd, the agents' lease (" << config.agents.lease_ms
               << " ms: --agent_lease_ms, else half of --heartbeat_timeout_ms) must be at least "
                  "--ha_lease_s plus "
               << kTakeoverMs / 1000 << " s, or agents stop their tasks during a takeover";
    return false;
  }
  return true;
}

// The scheduling pass's cadence, what a job gets by default, and the policy file.
bool FillScheduling(snn::MasterConfig& config) {
  config.schedule_interval_ms = FLAGS_schedule_interval_ms;
  if (!(FLAGS_schedule_max_busy >= 0.01 && FLAGS_schedule_max_busy <= 1) ||
      FLAGS_schedule_min_gap_ms < 0 || FLAGS_schedule_full_interval_ms < 1) {
    std::cerr << "snn-master: --schedule_max_busy must be between 0.01 and 1, "
                 "--schedule_min_gap_ms at least 0 and --schedule_full_interval_ms at least 1\n";
    return false;
  }
  config.schedule_cadence.max_busy = FLAGS_schedule_max_busy;
  config.schedule_cadence.min_gap_us = FLAGS_schedule_min_gap_ms * 1000;
  config.schedule_cadence.quick_depth = FLAGS_schedule_quick_depth;
  config.schedule_cadence.full_interval_us = FLAGS_schedule_full_interval_ms * 1000;
  config.jobs.admission.default_pool = FLAGS_default_pool;
  config.jobs.admission.default_queue = FLAGS_default_queue;
  config.jobs.admission.default_time_limit_s = FLAGS_default_time_limit_s;
  config.jobs.admission.default_keepalive_s = FLAGS_session_keepalive_s;
  config.jobs.admission.max_time_limit_s = FLAGS_max_time_limit_s;
  if (!(FLAGS_unit_ksps >= 1 && FLAGS_unit_ksps <= 1e7)) {
    LOG(ERROR) << "--unit_ksps must be between 1 and 10000000";
    return false;
  }
  config.jobs.admission.unit_ksps = FLAGS_unit_ksps;
  config.jobs.admission.unit_board_type = FLAGS_unit_board_type;
  config.policy_file = FLAGS_policy_file;
  if (!FLAGS_policy_file.empty()) {
    auto policy = snn::LoadPolicyFile(FLAGS_policy_file);
    if (!policy.ok()) {
      LOG(ERROR) << policy.status().message();
      return false;
    }
    config.jobs.scheduling = *policy;
  }

  return true;
}

// File descriptors: as many as allowed, and connections capped below them, so that a flood
// meets the cap (refused at once) rather than the limit (accept fails for everyone).
bool FillConnectionLimits(snn::MasterConfig& config) {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, 1 << 20);
    setrlimit(RLIMIT_NOFILE, &files);
    getrlimit(RLIMIT_NOFILE, &files);
  }
  const uint64_t fd_room = files.rlim_cur > 256 ? files.rlim_cur - 256 : 64;
  if (FLAGS_max_connections > fd_room) {
    LOG(WARNING) << "--max_connections=" << FLAGS_max_connections << " lowered to " << fd_room
                 << ": the file descriptor limit is " << files.rlim_cur;
  }
  config.limits.max_connections = std::min<uint64_t>(FLAGS_max_connections, fd_room);
  config.limits.max_per_owner = FLAGS_max_connections_per_user;
  config.limits.max_anonymous_per_peer = FLAGS_max_anonymous_connections_per_peer;
  config.limits.anonymous_timeout_ms = FLAGS_auth_timeout_s * 1000;
  config.limits.idle_timeout_ms = FLAGS_idle_timeout_s * 1000;
  config.limits.frame_timeout_ms = FLAGS_frame_timeout_s * 1000;
  config.limits.handshake_timeout_ms = FLAGS_frame_timeout_s * 1000 / 3;
  if (FLAGS_max_connections < 1 || FLAGS_max_connections_per_user < 1 ||
      FLAGS_max_anonymous_connections_per_peer < 1 || FLAGS_idle_timeout_s < 1 ||
      FLAGS_frame_timeout_s < 1 || FLAGS_auth_timeout_s < 1) {
    LOG(ERROR) << "--max_connections, --max_connections_per_user, "
                  "--max_anonymous_connections_per_peer, --idle_timeout_s, --frame_timeout_s and "
                  "--auth_timeout_s must be at least 1";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  snn::KeepFreedMemory();
  snn::InitDaemon(&argc, &argv,
                  "snn-master --data_dir=DIR [--listen=HOST:PORT] [--flagfile=FILE]\n"
                  "The master daemon of the SNN cluster resource manager.");

  auto listen = snn::ParseHostPort(FLAGS_listen, /*allow_zero_port=*/true);
  if (!listen.ok()) {
    LOG(ERROR) << "--listen: " << listen.status().message();
    return 2;
  }
  if (auto s = snn::CreateDataDir(FLAGS_data_dir); !s.ok()) {
    LOG(ERROR) << s.message();
    return 1;
  }
  auto store = snn::RocksStore::Open(FLAGS_data_dir + "/state");
  if (!store.ok()) {
    LOG(ERROR) << store.status().message();
    return 1;
  }

  snn::MasterConfig config;
  config.listen = *listen;
  config.port_file = FLAGS_port_file;
  config.metrics_listen = FLAGS_metrics_listen;
  config.metrics_port_file = FLAGS_metrics_port_file;
  config.http_listen = FLAGS_http_listen;
  config.http_port_file = FLAGS_http_port_file;
  config.http_limits.max_connections = FLAGS_http_max_connections;
  config.http_limits.max_per_user = FLAGS_http_max_per_user;
  config.http_limits.anonymous_timeout_ms = FLAGS_http_anonymous_timeout_s * 1000;
  config.http_limits.max_anonymous_per_address = FLAGS_http_max_anonymous_per_address;
  config.http_limits.max_upload_bytes = static_cast<size_t>(FLAGS_http_max_upload_mb) << 20;
  config.model_uploads.nir_import =
      FLAGS_nir_import.empty() ? snn::NirImportBesideSelf() : FLAGS_nir_import;
  config.model_uploads.max_cpu_s = FLAGS_nir_import_cpu_s;
  config.model_uploads.max_memory_bytes = uint64_t{FLAGS_nir_import_memory_mb} << 20;
  config.max_frame_bytes = FLAGS_max_frame_bytes;
  if (!FillAgentTerms(config)) return 2;
  config.agents.auto_drain_health_below = FLAGS_auto_drain_health_below;
  if (!FillScheduling(config)) return 2;

  config.auth = FLAGS_auth;
  config.tls_dir = FLAGS_tls_dir;
  config.munge_socket = FLAGS_munge_socket;
  config.node_cert_validity_s = FLAGS_node_cert_validity_s;
  if (FLAGS_node_cert_validity_s < 10) {
    LOG(ERROR) << "--node_cert_validity_s must be at least 10";
    return 2;
  }
  if (!FillConnectionLimits(config)) return 2;
  config.handle_signals = true;

  if (!FLAGS_ha_etcd.empty()) return RunHa(config, std::move(store).value());
  snn::SystemClock clock;
  snn::MasterServer master(config, clock, std::move(store).value());
  if (auto s = master.Start(); !s.ok()) {
    LOG(ERROR) << s.message();
    return 1;
  }
  master.Run();
  LOG(INFO) << "snn-master stopped";
  return 0;
}
