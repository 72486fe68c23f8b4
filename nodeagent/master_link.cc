#include "nodeagent/master_link.h"

#include <glog/logging.h>

#include "common/rpc/service_refusals.h"
#include "nodeagent/tasks/task_output.h"
#include "nodeagent/tasks/task_results.h"

namespace snn {
namespace {

TaskKey KeyOf(const v1::TaskStatus& s) { return TaskKey{s.job_id(), s.index(), s.attempt()}; }

// What an injected fault did to board `where` (node/board), in words.
std::string FaultWords(const v1::SimFaultRequest& fault, const std::string& where) {
  switch (fault.kind()) {
    case v1::SimFaultRequest::KILL_CORE:
      return "core " + std::to_string(fault.x()) + "," + std::to_string(fault.y()) + " of " +
             where + " is dead";
    case v1::SimFaultRequest::FAIL_BOARD:
      return "board " + where + " failed";
    case v1::SimFaultRequest::HEAL_BOARD:
      return "board " + where + " works again";
    case v1::SimFaultRequest::SLOW_BOARD:
      return "board " + where + " now runs at " + std::to_string(fault.speed_percent()) +
             "% of its capacity";
    default:
      return "board " + where + ": fault " + std::to_string(fault.kind());
  }
}

}  // namespace

MasterLink::MasterLink(asio::io_context& io, const Clock& clock, TaskManager& tasks,
                       MasterLinkOptions options)
    : io_(io),
      clock_(clock),
      tasks_(tasks),
      options_(std::move(options)),
      experiments_(io, clock, tasks.boards()),
      credentials_(options_.tls_dir, options_.join_token, options_.join_token_file) {
  router_.Add(rpc::kAgentLaunch,
              [this](const CallContext&, v1::LaunchRequest req, Responder<v1::LaunchResponse> r) {
                auto status = tasks_.Launch(req);
                if (!status.ok()) return r.Fail(status.status());
                v1::LaunchResponse resp;
                *resp.mutable_status() = *status;
                r.Ok(resp);
              });
  router_.Add(rpc::kAgentKill,
              [this](const CallContext&, v1::KillRequest req, Responder<v1::KillResponse> r) {
                const TaskKey key{req.job_id(), req.index(), req.attempt()};
                tasks_.Kill(key, req.reason());
                experiments_.Forget(key);  // an experiment service's task
                r.Ok(v1::KillResponse());
              });
  router_.Add(rpc::kAgentRunExperiments, [this](const CallContext&, v1::ExperimentBatch batch,
                                                Responder<v1::ExperimentBatchResponse> r) {
    experiments_.Run(std::move(batch),
                     [r](Result<v1::ExperimentBatchResponse> done) { r.Reply(done); });
  });
  router_.Add(rpc::kAgentTaskOutput, [this](const CallContext&, v1::TaskOutputRequest req,
                                            Responder<v1::TaskOutputResponse> r) {
    auto out = req.list_results() || !req.result().empty() ? ReadTaskResults(tasks_.data_dir(), req)
                                                           : ReadTaskOutput(tasks_.data_dir(), req);
    if (!out.ok()) return r.Fail(out.status());
    r.Ok(*out);
  });
  router_.Add(rpc::kAgentSimFault, [this](const CallContext&, v1::SimFaultRequest req,
                                          Responder<v1::SimFaultResponse> r) {
    Board* board = tasks_.boards().board(req.board());
    if (board == nullptr) {
      return r.Fail(InvalidArgument("node " + options_.node_name + " has no board " +
                                    std::to_string(req.board())));
    }
    if (Status s = board->InjectFault(req); !s.ok()) return r.Fail(s);
    const std::string outcome =
        FaultWords(req, options_.node_name + "/" + std::to_string(req.board())) +
        tasks_.ReconcileBoard(req.board());
    // Re-register first: the master must learn the board's new state and the tasks' new
    // mappings before it hears that a task on the board was lost, or it would place the
    // requeued job on the board it still believes whole. Only then report the ends.
    if (session_ && registered_) SendRegister();
    tasks_.Poll();
    v1::SimFaultResponse resp;
    resp.set_outcome(outcome);
    r.Ok(resp);
  });
}

v1::Credential MasterLink::Credential() const {
  v1::Credential c;
  c.set_user("snn-agent");
  c.set_node(options_.node_name);
  return c;
}

void MasterLink::HeardFromMaster() {
  last_contact_ms_ = clock_.NowMs();
  lease_expired_ = false;
  tasks_.RenewLease();
}

void MasterLink::CheckLease() {
  if (lease_ms_ <= 0 || lease_expired_ || tasks_.active_count() == 0) return;
  const int64_t silent = clock_.NowMs() - last_contact_ms_;
  if (silent <= lease_ms_) return;
  lease_expired_ = true;
  const std::string reason = "the agent heard nothing from the master for " +
                             std::to_string(silent / 1000) + " s (lease " +
                             std::to_string(lease_ms_) + " ms)";
  LOG(WARNING) << reason << "; stopping " << tasks_.active_count() << " tasks";
  tasks_.LoseAll(reason);
}

int64_t MasterLink::SilenceLimitMs() const {
  int64_t limit = std::max<int64_t>(3000, 5 * heartbeat_interval_ms_);
  if (lease_ms_ > 0) limit = std::min(limit, lease_ms_ / 2);
  return std::max(limit, 2 * heartbeat_interval_ms_);
}

void MasterLink::GiveUpSilentPeers(int64_t now) {
  boost::system::error_code ec;
  // A connection or handshake that hangs (a host gone without a reset): on to the next master.
  if ((connecting_ || handshaking_) && now - attempt_started_ms_ > kAttemptTimeoutMs) {
    LOG(WARNING) << "master " << target().ToString() << " did not answer within "
                 << kAttemptTimeoutMs << " ms; trying the next";
    if (connecting_) connecting_->close(ec);
    if (handshaking_) handshaking_->next_layer().close(ec);
  }
  // A master that stopped answering heartbeats (dead host, partition, a deposed HA leader).
  if (registered_ && session_ && now - last_contact_ms_ > SilenceLimitMs()) {
    const std::string why = "the master at " + target().ToString() + " has not answered for " +
                            std::to_string(now - last_contact_ms_) + " ms";
    LOG(WARNING) << why << "; connecting again";
    NextMaster();
    keep_next_connect_ = true;  // the close below must not delay it
    session_->Close(Unavailable(why));
  }
}

void MasterLink::Tick() {
  if (stopped_) return;
  CheckLease();
  const int64_t now = clock_.NowMs();
  GiveUpSilentPeers(now);
  if (!session_ && !connecting_ && !handshaking_ && now >= next_connect_ms_) Connect();
  if (registered_ && now >= next_heartbeat_ms_) SendHeartbeat();
  if (registered_ && !report_in_flight_) ReportEnded();
  if (registered_) MaybeRenew();
}

void MasterLink::RetryLater() { next_connect_ms_ = clock_.NowMs() + options_.reconnect_ms; }

void MasterLink::NextMaster(const Status& refusal) {
  const std::string named = LeaderNamedIn(refusal);
  auto leader = named.empty() ? Result<HostPort>(NotFound("")) : ParseHostPort(named);
  if (leader.ok() && leader->ToString() != target().ToString()) {
    LOG(INFO) << target().ToString() << " is a standby; the leader is " << named;
    redirect_ = *leader;
    next_connect_ms_ = 0;  // at once
    return;
  }
  redirect_.reset();
  current_ = (current_ + 1) % options_.masters.size();
  // Round the list without pause; after a whole round, wait before the next.
  next_connect_ms_ = current_ == 0 ? clock_.NowMs() + options_.reconnect_ms : 0;
}

void MasterLink::Connect() {
  attempt_started_ms_ = clock_.NowMs();
  connecting_ = std::make_unique<tcp::socket>(io_);
  boost::system::error_code ec;
  auto address = asio::ip::make_address(target().host, ec);
  if (ec) {
    // A host name: resolve it synchronously (rare, at (re)connect only).
    tcp::resolver resolver(io_);
    auto results = resolver.resolve(target().host, std::to_string(target().port), ec);
    if (ec || results.empty()) {
      LOG(WARNING) << "cannot resolve master " << target().ToString();
      connecting_.reset();
      NextMaster();
      return;
    }
    address = results.begin()->endpoint().address();
  }
  tcp::endpoint endpoint(address, target().port);
  connecting_->async_connect(endpoint, [this](const boost::system::error_code& ec) {
    auto socket = std::move(connecting_);
    if (stopped_) return;
    if (ec) {
      LOG_EVERY_N(WARNING, 10) << "cannot reach master " << target().ToString() << ": "
                               << ec.message();
      NextMaster();
      return;
    }
    if (options_.tls) return StartTls(std::move(*socket));
    OnConnected(Connection::Create(std::move(*socket), options_.max_frame_bytes, nullptr, nullptr));
  });
}

void MasterLink::StartTls(tcp::socket socket) {
  enrolling_ = !credentials_.has_certificate();
  if (enrolling_ && credentials_.join_token().empty()) {
    LOG_EVERY_N(ERROR, 30) << "no node certificate in " << options_.tls_dir
                           << " and no --join_token: ask an admin for a token (snnctl node "
                              "token "
                           << options_.node_name << ") or a certificate (snn-ca node)";
    return RetryLater();
  }
  auto context = credentials_.Context();
  if (!context.ok()) {
    LOG_EVERY_N(ERROR, 30) << "TLS: " << context.status().message();
    return RetryLater();
  }
  tls_context_ = *context;
  handshaking_ = std::make_unique<TlsStream>(std::move(socket), *tls_context_);
  ExpectPeerHost(*handshaking_, target().host);
  TlsStream* mine = handshaking_.get();
  handshaking_->async_handshake(ssl::stream_base::client, [this, mine](
                                                              const boost::system::error_code& ec) {
    if (stopped_ || handshaking_.get() != mine) return;
    auto stream = std::move(handshaking_);
    if (ec) {
      const std::string refusal = CertificateRefusal(*stream, target().host);
      LOG_EVERY_N(WARNING, 10) << "TLS handshake with master " << target().ToString()
                               << " failed: " << (refusal.empty() ? ec.message() : refusal);
      return NextMaster();
    }
    if (PeerOf(*stream).role != "master") {
      LOG_EVERY_N(ERROR, 10) << "the server at " << target().ToString()
                             << " does not hold the master's certificate; not talking to it";
      return RetryLater();
    }
    OnConnected(Connection::Create(std::move(stream), options_.max_frame_bytes, nullptr, nullptr));
  });
}

void MasterLink::OnConnected(std::shared_ptr<Connection> session) {
  session_ = std::move(session);
  session_->set_request_handler([this](const std::shared_ptr<Connection>& c, v1::Envelope e) {
    Identity master;  // the peer is the master: checked by its certificate (or trusted, no TLS)
    master.kind = Identity::Kind::kMaster;
    router_.Dispatch(c, std::move(e), std::move(master));
  });
  session_->set_close_handler(
      [this](const std::shared_ptr<Connection>&, const Status& why) { OnClosed(why); });
  session_->Start();
  if (enrolling_) return SendEnrol();
  SendRegister();
}

void MasterLink::SendEnrol() {
  auto csr = credentials_.NewRequest(options_.node_name);
  if (!csr.ok()) {
    LOG(ERROR) << "cannot make a certificate request: " << csr.status().message();
    return session_->Close(csr.status());
  }
  v1::EnrolRequest req;
  req.set_token(credentials_.join_token());
  req.set_node(options_.node_name);
  req.set_csr_pem(*csr);
  session_->Call(rpc::kNodeEnrol, req, v1::Credential(), [this](Result<v1::Envelope> reply) {
    auto resp = DecodeResponse<v1::EnrolResponse>(reply);
    Status s = resp.ok() ? credentials_.Install(resp->cert_pem()) : resp.status();
    if (!s.ok()) {
      LOG(ERROR) << "enrolment as node " << options_.node_name << " failed: " << s.message();
    } else {
      LOG(INFO) << "enrolled as node " << options_.node_name << "; certificate saved in "
                << credentials_.pem_path();
    }
    // Reconnects: with the certificate at once, or after the usual delay to try again.
    if (session_) session_->Close(Unavailable("enrolment done"));
  });
}

void MasterLink::MaybeRenew() {
  if (!options_.tls || renewing_ || !session_ || enrolling_) return;
  if (!credentials_.RenewDue(clock_.NowMs() / 1000)) return;
  auto csr = credentials_.NewRequest(options_.node_name);
  if (!csr.ok()) return;
  renewing_ = true;
  v1::RenewRequest req;
  req.set_csr_pem(*csr);
  session_->Call(rpc::kNodeRenew, req, v1::Credential(), [this](Result<v1::Envelope> reply) {
    renewing_ = false;
    auto resp = DecodeResponse<v1::RenewResponse>(reply);
    Status s = resp.ok() ? credentials_.Install(resp->cert_pem()) : resp.status();
    if (!s.ok()) {
      LOG_EVERY_N(WARNING, 10) << "certificate renewal failed: " << s.message();
    } else {
      LOG(INFO) << "renewed the node certificate; the next session uses it";
    }
  });
}

void MasterLink::CertificateRevoked(const Status& why) {
  // Presenting it again can only be refused again: set it aside and enrol at the next connection
  // (with the join token file's token, read then: a new one placed there is used).
  const Status aside = credentials_.SetAside();
  LOG(ERROR) << why.message() << "; "
             << (aside.ok() ? "the certificate is set aside (" + credentials_.pem_path() +
                                  ".revoked) and the agent enrols again with "
                            : aside.message() + "; the agent needs ")
             << (credentials_.join_token().empty()
                     ? "a new join token: snnctl node token " + options_.node_name +
                           " --boards FILE > TOKENFILE, given with --join_token_file"
                     : "its join token (a used one is refused: then give a new one in "
                       "--join_token_file)");
}

void MasterLink::BoardsChanged() {
  if (session_ && registered_) SendRegister();
}

void MasterLink::SendRegister() {
  v1::RegisterRequest req;
  v1::NodeRecord* node = req.mutable_node();
  node->set_name(options_.node_name);
  for (const auto& p : options_.pools) node->add_pools(p);
  node->set_switch_name(options_.switch_name);
  for (v1::BoardLink link : options_.links) {
    if (link.to_node().empty()) link.set_to_node(options_.node_name);
    *node->add_links() = std::move(link);
  }
  for (const auto& b : tasks_.boards().Describe()) *node->add_boards() = b;
  std::vector<TaskKey> ended;
  for (const auto& s : tasks_.Snapshot()) {
    *req.add_tasks() = s;
    if (s.state() != v1::TASK_RUNNING) ended.push_back(KeyOf(s));
  }
  session_->Call(rpc::kNodeRegister, req, Credential(), [this, ended](Result<v1::Envelope> reply) {
    auto resp = DecodeResponse<v1::RegisterResponse>(reply);
    if (!resp.ok()) {
      if (resp.status().code() == Code::kNotLeader) {
        NextMaster(resp.status());
        keep_next_connect_ = true;  // the close below must not delay it
      } else if (resp.status().code() == Code::kUnauthenticated &&
                 resp.status().message().find(kCertificateRevoked) != std::string::npos) {
        CertificateRevoked(resp.status());
      } else {
        LOG(WARNING) << "registration refused: " << resp.status().ToString();
      }
      if (session_) session_->Close(resp.status());
      return;
    }
    registered_ = true;
    report_in_flight_ = false;
    heartbeat_interval_ms_ = std::max<int64_t>(50, resp->heartbeat_interval_ms());
    lease_ms_ = static_cast<int64_t>(resp->lease_ms());
    tasks_.SetMasterTerms(lease_ms_, resp->suspend_after_ms());
    HeardFromMaster();
    next_heartbeat_ms_ = clock_.NowMs() + heartbeat_interval_ms_;
    tasks_.Acknowledge(ended);  // the master recorded them before answering
    LOG(INFO) << "registered with master " << target().ToString();
    ReportEnded();
  });
}

void MasterLink::SendHeartbeat() {
  next_heartbeat_ms_ = clock_.NowMs() + heartbeat_interval_ms_;
  v1::HeartbeatRequest req;
  req.set_node(options_.node_name);
  for (auto& u : tasks_.UsageChanges()) *req.add_usage() = std::move(u);
  session_->Call(rpc::kNodeHeartbeat, req, Credential(), [this](Result<v1::Envelope> reply) {
    auto resp = DecodeResponse<v1::HeartbeatResponse>(reply);
    if (resp.ok()) {
      HeardFromMaster();
      tasks_.SetMasterTerms(lease_ms_, resp->suspend_after_ms());
    }
    if (!resp.ok() && resp.status().code() == Code::kFailedPrecondition && session_) {
      session_->Close(resp.status());  // the master gave us up: register afresh
    }
  });
}

void MasterLink::ReportEnded() {
  if (!registered_ || report_in_flight_ || !session_) return;
  v1::TaskStatusReport report;
  std::vector<TaskKey> keys;
  for (const auto& s : tasks_.EndedUnacknowledged()) {
    *report.add_tasks() = s;
    keys.push_back(KeyOf(s));
  }
  if (keys.empty()) return;
  report_in_flight_ = true;
  session_->Call(rpc::kNodeTaskStatus, report, Credential(),
                 [this, keys](Result<v1::Envelope> reply) {
                   report_in_flight_ = false;
                   auto ack = DecodeResponse<v1::TaskStatusAck>(reply);
                   if (!ack.ok()) return;  // kept; sent again after re-registering
                   HeardFromMaster();
                   tasks_.Acknowledge(keys);
                   ReportEnded();
                 });
}

void MasterLink::OnClosed(const Status& why) {
  if (registered_) LOG(WARNING) << "lost the master session: " << why.ToString();
  session_.reset();
  registered_ = false;
  report_in_flight_ = false;
  renewing_ = false;
  const bool enrolled = enrolling_ && credentials_.has_certificate();
  enrolling_ = false;
  if (keep_next_connect_) {
    keep_next_connect_ = false;
  } else {
    next_connect_ms_ = enrolled ? 0 : clock_.NowMs() + options_.reconnect_ms;
  }
}

void MasterLink::Stop() {
  stopped_ = true;
  if (connecting_) {
    boost::system::error_code ignored;
    connecting_->close(ignored);
  }
  if (handshaking_) {
    boost::system::error_code ignored;
    handshaking_->next_layer().close(ignored);
  }
  if (session_) session_->Close(Unavailable("agent stopping"));
}

}  // namespace snn
