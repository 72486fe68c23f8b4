#include "master/master_server.h"

#include <glog/logging.h>
#include <unistd.h>

#include <fstream>

#include "common/base/file_util.h"
#include "master/auth/access_policy.h"
#include "master/jobs/job_loader.h"
#include "master/master_state_metrics.h"
#include "master/policy/policy_diff.h"
#include "master/policy/policy_file.h"

namespace snn {

namespace {

// A user's credential decoded by the master's munged. When that munged fails (not the
// credential), the user is told the fault is on the master's side: the plain message names a
// socket the user would look for on their own host.
Result<MungeIdentity> DecodeOnTheMaster(const std::string& socket, const std::string& credential) {
  auto who = MungeDecode(socket, credential);
  if (who.ok() || who.status().code() != Code::kUnavailable) return who;
  LOG_EVERY_N(ERROR, 100) << "decoding a user's credential: " << who.status().message();
  return Unavailable("the master cannot check your credential: its own munged fails (" +
                     who.status().message() +
                     "); your host is not at fault: tell the cluster's operator");
}

}  // namespace

MasterServer::MasterServer(MasterConfig config, const Clock& clock, std::unique_ptr<Store> store)
    : config_(std::move(config)),
      clock_(clock),
      store_(std::move(store)),
      journal_(*store_, [this](std::function<void()> fn) { asio::post(io_, std::move(fn)); }),
      archive_(*store_),
      agent_channel_(nodes_),
      job_components_(jobs_, archive_, nodes_, agent_channel_, journal_, clock_, config_.jobs,
                      [this] { RequestSchedule(); }),
      experiments_(jobs_, journal_, *store_, agent_channel_, job_components_.usage, clock_),
      clients_(jobs_, archive_, nodes_, agent_channel_, journal_, job_components_.lifecycle,
               job_components_.scheduling, clock_),
      experiment_service_(jobs_, archive_, journal_, job_components_.scheduling, experiments_),
      agents_(nodes_, journal_, job_components_.lifecycle, clock_, config_.agents),
      admin_(nodes_, agent_channel_, journal_, [this] { RequestSchedule(); }),
      policy_(job_components_.scheduling, journal_, [this] { RequestSchedule(); }),
      enrol_(journal_, clock_, EnrolOptions{}, approvals_,
             [this](const std::string& node) {
               if (NodeEntry* entry = nodes_.Find(node); entry && entry->session) {
                 entry->session->Close(Unauthenticated("node " + node + " was revoked"));
               }
             }),
      replica_(*store_),
      reservations_(job_components_.scheduling.reservations(), jobs_, nodes_, journal_, clock_,
                    [this] { RequestSchedule(); }),
      billing_(*store_),
      billing_service_(billing_, job_components_.scheduling, job_components_.usage, jobs_, nodes_,
                       journal_, clock_),
      access_tokens_(journal_, clock_),
      auth_(
          io_, clock_,
          config_.auth == "none" ? Authenticator::Mode::kNone : Authenticator::Mode::kMunge,
          [socket = config_.munge_socket](const std::string& credential) {
            return DecodeOnTheMaster(socket, credential);
          },
          [this](const std::shared_ptr<Connection>& c, v1::Envelope e, Identity who) {
            if (who.kind == Identity::Kind::kUser) {
              static const uid_t euid = geteuid();
              who.role = RoleOf(job_components_.scheduling.scheduling().access(), who, euid);
            }
            router_.Dispatch(c, std::move(e), std::move(who));
          }),
      server_(
          io_, config_.max_frame_bytes,
          [this](const std::shared_ptr<Connection>& c, v1::Envelope e) {
            if (standby_) {
              c->Reply(e.id(), NotLeader(config_.standby_leader()), nullptr);
              return;
            }
            auth_.OnRequest(c, std::move(e));
          },
          [this](const std::shared_ptr<Connection>& c, const Status& why) {
            auth_.OnClosed(c.get());
            const std::string node = nodes_.OnSessionClosed(c.get());
            if (!node.empty())
              LOG(WARNING) << "node " << node << " disconnected: " << why.ToString();
          }),
      events_(clock_),
      tick_timer_(io_, clock_),
      notify_(io_),
      signals_(io_),
      reload_signals_(io_),
      pass_timer_(io_),
      full_pass_timer_(io_),
      cadence_(config_.schedule_cadence) {
  RegisterServices();
  ObserveAndPublish();
}

// Every service's methods on the router, and what the services tell each other.
void MasterServer::RegisterServices() {
  clients_.Register(router_);
  experiment_service_.Register(router_);
  job_components_.lifecycle.set_on_service_ended(
      [this](const v1::JobRecord& job, const std::string& reason) {
        experiments_.ServiceEnded(job, reason);
      });
  agents_.Register(router_);
  agents_.set_suspend_after([this] {
    return job_components_.scheduling.scheduling().suspend_after_s() * uint64_t{1000};
  });
  if (config_.auth != "none") {
    agents_.set_approvals(&approvals_);
    auth_.set_node_check([this](const PeerCertificate& cert) {
      return approvals_.CheckCertificate(cert.name, cert.generation);
    });
  }
  admin_.Register(router_);
  policy_.Register(router_);
  billing_service_.Register(router_);
  enrol_.Register(router_);
  replica_.Register(router_);
  reservations_.Register(router_);
  access_tokens_.Register(router_);
}

// Metrics, the events watchers hear, and the log of refusals.
void MasterServer::ObserveAndPublish() {
  router_.set_observer([this](const std::string& method, Code code, double seconds) {
    metrics_.ObserveRpc(method, code, seconds);
  });
  journal_.set_on_commit([this](size_t writes) { metrics_.ObserveCommit(writes); });
  // Watchers hear of a job's change once it is durable, as its submitter does.
  job_components_.writer.set_on_persisted([this](const v1::JobRecord& job) {
    journal_.Defer([this, id = job.id(), event = events_.JobChanged(job)]() mutable {
      if (event) events_.Publish(std::move(*event));
      events_.JobWritten(id);
    });
  });
  job_components_.set_metrics(&metrics_);
  // Start forecasts are worked out on a thread of their own and answered here.
  job_components_.scheduling.set_post_to_io(
      [this](std::function<void()> fn) { asio::post(io_, std::move(fn)); });
  router_.set_on_refused([](const Identity& who, const std::string& method, const Status& why) {
    LOG(WARNING) << "refused " << method << " to " << who.Describe() << ": " << why.message();
  });
}

Status MasterServer::SetUpAuth() {
  if (config_.auth == "none") {
    if (config_.listen.host != "127.0.0.1" && config_.listen.host != "::1") {
      return InvalidArgument(
          "--auth=none believes whatever a client claims; it listens on "
          "127.0.0.1 or ::1 only, not " +
          config_.listen.host);
    }
    LOG(WARNING) << "--auth=none: no TLS, and every request's claimed user and node are "
                    "believed; for development on this host only";
    return Status::Ok();
  }
  if (config_.auth != "munge") return InvalidArgument("--auth must be munge or none");
  // Users' credentials are decoded by this host's munged: it must answer now, so that the
  // operator hears of a missing one here, not users who would then check their own.
  auto probe = MungeEncode(config_.munge_socket);
  const Status munged =
      probe.ok() ? MungeDecode(config_.munge_socket, *probe).status() : probe.status();
  if (!munged.ok()) {
    return Unavailable("the master's munged does not work: " + munged.message() +
                       " (the master decodes users' credentials with it; see --munge_socket)");
  }
  const std::string dir = config_.tls_dir + "/";
  auto tls = MakeServerTls({dir + "ca.crt", dir + "master.crt", dir + "master.key"});
  if (!tls.ok()) {
    return Status(tls.status().code(),
                  tls.status().message() +
                      " (create the cluster's CA and the master's "
                      "certificate with snn-ca; see docs/operator-guide.md, Security)");
  }
  server_.set_tls(*tls);
  auto ca_cert = ReadWholeFile(dir + "ca.crt", "the CA certificate");
  if (!ca_cert.ok()) return ca_cert.status();
  EnrolOptions enrol;
  enrol.node_cert_validity_s = config_.node_cert_validity_s;
  auto ca_key = ReadWholeFile(dir + "ca.key", "the CA key");
  if (ca_key.ok()) {
    enrol.ca = pki::KeyAndCert{*ca_key, *ca_cert};
  } else {
    LOG(WARNING) << "no CA key in " << config_.tls_dir
                 << ": nodes cannot enrol with join tokens, only with certificates made by snn-ca";
  }
  enrol_.set_options(std::move(enrol));
  return Status::Ok();
}

Status MasterServer::StartHttp() {
  if (config_.http_listen.empty()) return Status::Ok();
  const HttpLimits& limits = config_.http_limits;
  if (limits.max_connections == 0 || limits.max_per_user == 0 ||
      limits.max_anonymous_per_address == 0) {
    return InvalidArgument(
        "--http_max_connections, --http_max_per_user and --http_max_anonymous_per_address must "
        "be at least 1 (an empty --http_listen turns the API off)");
  }
  auto address = ParseHostPort(config_.http_listen, true);
  if (!address.ok()) return address.status();
  std::shared_ptr<ssl::context> tls;
  if (config_.auth == "none") {
    if (address->host != "127.0.0.1" && address->host != "::1") {
      return InvalidArgument("--auth=none serves plain HTTP on 127.0.0.1 or ::1 only, not " +
                             address->host);
    }
  } else {
    const std::string dir = config_.tls_dir + "/";
    auto context = MakeServerTls({dir + "ca.crt", dir + "master.crt", dir + "master.key"});
    if (!context.ok()) return context.status();
    (*context)->set_verify_mode(ssl::verify_none);  // HTTP clients prove themselves by token
    tls = *context;
  }
  RestApiHooks hooks;
  hooks.dispatch = [this](const std::shared_ptr<ReplySink>& sink, v1::Envelope e, Identity who) {
    if (standby_) return sink->Reply(e.id(), NotLeader(config_.standby_leader()), nullptr);
    router_.Dispatch(sink, std::move(e), std::move(who));
  };
  hooks.check_token = [this](const std::string& token) { return access_tokens_.Check(token); };
  hooks.may_read = [this](const Identity& who, const std::string& tenant) {
    return MayRead(job_components_.scheduling.scheduling(), who, tenant).ok();
  };
  hooks.events = &events_;
  hooks.role_of = [this](const Identity& who) {
    static const uid_t euid = geteuid();
    return RoleOf(job_components_.scheduling.scheduling().access(), who, euid);
  };
  rest_ = std::make_unique<RestApi>(io_, clock_, std::move(hooks), config_.model_uploads);
  http_ = std::make_unique<HttpServer>(
      io_, clock_,
      [this](HttpRequest request, std::shared_ptr<HttpReply> reply) {
        rest_->Handle(std::move(request), std::move(reply));
      },
      HttpGate{[this](const HttpRequest& head) { return rest_->OwnerOf(head); }, ErrorResponse,
               RestApi::IsUpload},
      tls, config_.http_limits);
  SNN_RETURN_IF_ERROR(http_->Listen(*address));
  LOG(INFO) << "HTTP API on " << (tls ? "https://" : "http://") << address->host << ":"
            << http_->port() << "/v1/";
  if (!config_.http_port_file.empty()) {
    SNN_RETURN_IF_ERROR(WritePortFile(config_.http_port_file, http_->port()));
  }
  return Status::Ok();
}

MasterServer::~MasterServer() { store_->Close(); }

namespace {

// Parses every record under `prefix` as a `Record` and hands it to `restore`.
template <typename Record>
Status RestoreEach(Store& store, const char* prefix, const char* what,
                   const std::function<void(std::string_view key, Record record)>& restore) {
  Status corrupt;
  Status s = store.Scan(prefix, "", [&](std::string_view key, std::string_view value) {
    Record record;
    if (!record.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
      corrupt = Internal(std::string("corrupt ") + what + " record " + std::string(key));
      return false;
    }
    restore(key, std::move(record));
    return true;
  });
  return s.ok() ? corrupt : s;
}

}  // namespace

Status MasterServer::Recover() {
  // Only the hot state is read: nodes, pending and running jobs, tokens, the policy and the
  // archive's totals. The archive itself stays on disk, however many jobs it holds.
  const auto started = MonotonicNow();
  SNN_RETURN_IF_ERROR(RestoreEach<v1::NodeRecord>(*store_, kNodeKeyPrefix, "node",
                                                  [&](std::string_view, v1::NodeRecord node) {
                                                    nodes_.Restore(std::move(node), clock_.NowMs());
                                                  }));
  size_t job_count = 0;
  SNN_RETURN_IF_ERROR(LoadHotJobs(*store_, [&](v1::JobRecord job) {
    jobs_.Restore(std::move(job));
    ++job_count;
  }));
  SNN_RETURN_IF_ERROR(archive_.Load());
  jobs_.ReserveIds(archive_.stats());
  SNN_RETURN_IF_ERROR(
      RestoreEach<v1::NodeApproval>(*store_, kApprovalKeyPrefix, "node approval",
                                    [&](std::string_view, v1::NodeApproval approval) {
                                      approvals_.Restore(std::move(approval));
                                    }));
  for (const auto& [name, entry] : nodes_.nodes()) approvals_.AdoptRegistered(entry.record);
  SNN_RETURN_IF_ERROR(RestoreEach<v1::Reservation>(
      *store_, kReservationKeyPrefix, "reservation", [&](std::string_view, v1::Reservation r) {
        job_components_.scheduling.reservations().Restore(std::move(r));
      }));
  SNN_RETURN_IF_ERROR(RestoreEach<v1::JoinTokenRecord>(
      *store_, kTokenKeyPrefix, "join token", [&](std::string_view key, v1::JoinTokenRecord token) {
        enrol_.Restore(std::string(key.substr(sizeof(kTokenKeyPrefix) - 1)), std::move(token));
      }));
  SNN_RETURN_IF_ERROR(RestoreEach<v1::AccessTokenRecord>(
      *store_, kAccessTokenKeyPrefix, "access token",
      [&](std::string_view key, v1::AccessTokenRecord token) {
        access_tokens_.Restore(std::string(key.substr(sizeof(kAccessTokenKeyPrefix) - 1)),
                               std::move(token));
      }));
  auto policy = store_->Get(kPolicyKey);
  if (!policy.ok()) return policy.status();
  if (*policy) {
    v1::SchedulingConfig stored;  // an admin's changes outlive restarts; the file seeds it
    if (!stored.ParseFromString(**policy)) return Internal("corrupt policy record");
    job_components_.scheduling.SetScheduling(stored);
    LOG(INFO) << "scheduling policy from the store (admin changes kept; --policy_file not read)";
  }
  SNN_RETURN_IF_ERROR(billing_.Load());
  job_components_.set_billing(&billing_);
  job_components_.lifecycle.RecoverReservations();
  job_components_.dependencies.Recover();
  SNN_RETURN_IF_ERROR(experiments_.Recover());
  if (size_t moved = job_components_.writer.ArchiveFinishedJobs(); moved > 0) {
    LOG(INFO) << "moving " << moved << " finished jobs to the archive";
  }
  journal_.Commit();  // what recovery settled (archived jobs, dependencies)
  uint64_t archived = 0;
  for (const auto& c : archive_.stats().counts()) archived += c.count();
  LOG(INFO)
      << "recovered " << job_count << " jobs (and " << archived << " archived) and "
      << nodes_.nodes().size() << " nodes in "
      << std::chrono::duration_cast<std::chrono::milliseconds>(MonotonicNow() - started).count()
      << " ms";
  return Status::Ok();
}

Status MasterServer::Start() {
  SNN_RETURN_IF_ERROR(SetUpAuth());
  server_.set_limits(config_.limits, &clock_);
  standby_ = static_cast<bool>(config_.standby_leader);
  if (!standby_) SNN_RETURN_IF_ERROR(Recover());
  SNN_RETURN_IF_ERROR(server_.Listen(config_.listen));
  LOG(INFO) << "snn-master listening on " << config_.listen.host << ":" << server_.port()
            << (standby_ ? " as a standby" : "");
  if (!config_.port_file.empty()) {
    SNN_RETURN_IF_ERROR(WritePortFile(config_.port_file, server_.port()));
  }
  SNN_RETURN_IF_ERROR(StartHttp());
  if (!config_.metrics_listen.empty()) {
    auto endpoint = MetricsEndpoint::Start(
        config_.metrics_listen, io_, metrics_.registry(),
        [this] { return MasterStateMetrics(jobs_, archive_, nodes_, billing_); });
    if (!endpoint.ok()) return endpoint.status();
    metrics_endpoint_ = std::move(endpoint).value();
    LOG(INFO) << "metrics on http://"
              << config_.metrics_listen.substr(0, config_.metrics_listen.rfind(':')) << ":"
              << metrics_endpoint_->port() << "/metrics";
    if (!config_.metrics_port_file.empty()) {
      SNN_RETURN_IF_ERROR(WritePortFile(config_.metrics_port_file, metrics_endpoint_->port()));
    }
  }
  if (config_.handle_signals) {
    signals_.add(SIGTERM);
    signals_.add(SIGINT);
    signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (!ec) Stop();
    });
    reload_signals_.add(SIGHUP);
    WaitForReload();
  }
  notify_.Start();
  if (standby_) {
    notify_.Ready("standing by; redirecting to the leader");
    return Status::Ok();
  }
  Tick();
  RequestSchedule();
  notify_.Ready(StatusLine());
  return Status::Ok();
}

void MasterServer::Promote() {
  asio::post(io_, [this] {
    if (!standby_ || stopping_) return;
    if (auto s = Recover(); !s.ok()) {
      LOG(ERROR) << "taking over as leader: " << s.message();
      google::FlushLogFiles(google::GLOG_INFO);
      _exit(1);
    }
    standby_ = false;
    Tick();
    RequestSchedule();
    notify_.Status(StatusLine());
    LOG(INFO) << "snn-master leads: " << StatusLine();
  });
}

namespace {
int64_t MonotonicUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(MonotonicNow().time_since_epoch())
      .count();
}
}  // namespace

void MasterServer::RequestSchedule() {
  if (schedule_wanted_ || stopping_) return;
  schedule_wanted_ = true;
  const int64_t wait_us = cadence_.WaitUs(MonotonicUs());
  if (wait_us == 0) {
    asio::post(io_, [this] { RunPass(); });
    return;
  }
  pass_timer_.expires_after(std::chrono::microseconds(wait_us));
  pass_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) RunPass();
  });
}

void MasterServer::RunPass() {
  schedule_wanted_ = false;
  if (stopping_) return;
  const int64_t start = MonotonicUs();
  const bool full = job_components_.scheduling.RunSchedulingPass(
      cadence_.DepthAt(start, jobs_.views().pending().size()));
  const int64_t end = MonotonicUs();
  cadence_.PassRan(end, end - start, full);
  metrics_.ObservePass(static_cast<double>(end - start) / 1e6, full);
  if (full) return;
  // What the quick pass left waiting is the next full pass's to look at, event or not.
  full_pass_timer_.expires_after(std::chrono::microseconds(cadence_.FullDueInUs(end)));
  full_pass_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) RequestSchedule();
  });
}

void MasterServer::Tick() {
  for (const auto& node : nodes_.ExpireHeartbeats(clock_.NowMs(), config_.heartbeat_timeout_ms)) {
    const std::string reason = nodes_.Find(node)->down_reason;
    LOG(WARNING) << "node " << node << " is DOWN: " << reason << "; requeueing its jobs";
    job_components_.lifecycle.OnNodeDown(node, reason);
  }
  job_components_.lifecycle.ReapSessions();
  job_components_.lifecycle.RunSchedules();
  reservations_.Tick();
  experiments_.Pump();  // a service that started, or one recovered with experiments waiting
  for (auto& event : events_.NodesChanged(nodes_)) events_.Publish(std::move(event));
  events_.Tick();
  // Ages grow, grace periods pass and reservations come due without any event: pass anyway.
  const int64_t now = clock_.NowMs();
  if (config_.schedule_interval_ms > 0 &&
      now - last_periodic_pass_ms_ >= config_.schedule_interval_ms) {
    last_periodic_pass_ms_ = now;
    RequestSchedule();
  }
  if (now - last_status_ms_ >= 10000) {
    last_status_ms_ = now;
    notify_.Status(StatusLine());
  }
  tick_timer_.WaitMs(config_.tick_ms, [this](bool expired) {
    if (expired && !stopping_) Tick();
  });
}

void MasterServer::WaitForReload() {
  reload_signals_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec || stopping_) return;
    ReloadPolicy();
    WaitForReload();
  });
}

void MasterServer::ReloadPolicy() {
  if (config_.policy_file.empty()) {
    LOG(WARNING) << "SIGHUP: no --policy_file to re-read; nothing changed";
    return;
  }
  notify_.Reloading();
  auto next = LoadPolicyFile(config_.policy_file);
  if (!next.ok()) {
    LOG(ERROR) << "SIGHUP: " << next.status().message() << "; the policy in force is kept";
    notify_.Ready(StatusLine());
    return;
  }
  const std::string changed = DescribePolicyChange(job_components_.scheduling.scheduling(), *next);
  if (changed.empty()) {
    LOG(INFO) << "SIGHUP: " << config_.policy_file << " re-read; the policy is unchanged";
    notify_.Ready(StatusLine());
    return;
  }
  job_components_.scheduling.SetScheduling(*next);
  journal_.PutPolicy(*next);
  RequestSchedule();
  journal_.Commit([this, changed] {
    LOG(INFO) << "SIGHUP: policy reloaded from " << config_.policy_file << ": " << changed;
    notify_.Ready(StatusLine());
  });
}

std::string MasterServer::StatusLine() const {
  size_t up = 0;
  for (const auto& [name, node] : nodes_.nodes()) up += node.up() ? 1 : 0;
  return "serving on port " + std::to_string(server_.port()) + ": " +
         std::to_string(jobs_.CountInState(v1::PENDING)) + " jobs pending, " +
         std::to_string(jobs_.CountInState(v1::RUNNING)) + " running, " + std::to_string(up) +
         " of " + std::to_string(nodes_.nodes().size()) + " nodes up";
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
    notify_.Stopping();
    notify_.Cancel();
    server_.Stop();
    if (http_) http_->Stop();
    tick_timer_.Cancel();
    pass_timer_.cancel();
    full_pass_timer_.cancel();
    signals_.cancel();
    reload_signals_.cancel();
    journal_.Commit([this] { io_.stop(); });
  });
}

}  // namespace snn
