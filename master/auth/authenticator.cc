#include "master/auth/authenticator.h"

#include <glog/logging.h>
#include <pwd.h>

#include "master/auth/access_policy.h"

namespace snn {

Authenticator::Authenticator(asio::io_context& io, const Clock& clock, Mode mode, Decode decode,
                             Deliver deliver, size_t threads)
    : io_(io),
      clock_(clock),
      mode_(mode),
      decode_(std::move(decode)),
      deliver_(std::move(deliver)),
      workers_(threads) {}

Authenticator::~Authenticator() {
  workers_.stop();
  workers_.join();
}

Identity Authenticator::Claimed(const v1::Credential& claim) const {
  Identity who;
  if (!claim.node().empty()) {
    who.kind = Identity::Kind::kNode;
    who.node = claim.node();
  } else if (!claim.user().empty()) {
    who.kind = Identity::Kind::kUser;
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* found = nullptr;
    if (getpwnam_r(claim.user().c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found) {
      who.uid = found->pw_uid;
      who.gid = found->pw_gid;
      ResolveUser(who);
    } else {
      who.uid = 0xfffffffe;  // nobody that could be uid 0
      who.gid = 0xfffffffe;
      who.user = claim.user();
    }
  }
  return who;
}

void Authenticator::OnRequest(const std::shared_ptr<Connection>& conn, v1::Envelope envelope) {
  if (mode_ == Mode::kNone) {
    // The claim's user database lookups once per connection and claim, not per request.
    Session& session = sessions_[conn.get()];
    const v1::Credential& claim = envelope.credential();
    const std::string key = claim.node() + '\0' + claim.user();
    if (session.credential != key || session.expires_s == 0) {
      session.identity = Claimed(claim);
      session.credential = key;
      session.expires_s = 1;
    }
    Identity who = session.identity;
    if (!Owned(conn, envelope,
               claim.node().empty() ? "user " + claim.user() : "node " + claim.node())) {
      return;
    }
    return deliver_(conn, std::move(envelope), std::move(who));
  }
  const PeerCertificate& cert = conn->peer_certificate();
  if (cert.role == "node" && !cert.name.empty()) {
    if (node_check_) {
      if (Status refused = node_check_(cert); !refused.ok()) {
        LOG_EVERY_N(WARNING, 100) << "refused node " << cert.name << " from " << conn->peer()
                                  << ": " << refused.message() << " (" << google::COUNTER
                                  << " so far)";
        conn->Reply(envelope.id(), refused, nullptr);
        return conn->CloseOnceWritten(refused);
      }
    }
    Identity who;
    who.kind = Identity::Kind::kNode;
    who.node = cert.name;
    who.cert_serial = cert.serial;
    who.cert_not_before_s = cert.not_before_s;
    who.cert_not_after_s = cert.not_after_s;
    if (!Owned(conn, envelope, "node " + cert.name)) return;
    return deliver_(conn, std::move(envelope), std::move(who));
  }
  if (cert.role == "master") {  // another master of an HA group
    Identity who;
    who.kind = Identity::Kind::kMaster;
    who.node = cert.name;
    if (!Owned(conn, envelope, "master " + cert.name)) return;
    return deliver_(conn, std::move(envelope), std::move(who));
  }
  Session& session = sessions_[conn.get()];
  if (session.waiting.size() >= kMaxWaiting) {
    return conn->Close(
        Status(Code::kResourceExhausted, "more than " + std::to_string(kMaxWaiting) +
                                             " requests waiting for their credential's decode"));
  }
  session.waiting.push_back(std::move(envelope));
  if (!session.decoding) Drain(conn, session);
}

bool Authenticator::Owned(const std::shared_ptr<Connection>& conn, const v1::Envelope& envelope,
                          const std::string& owner) {
  if (!conn->owner().empty()) return true;
  const Status refused = conn->set_owner(owner);
  if (refused.ok()) return true;
  conn->Reply(envelope.id(), refused, nullptr);
  conn->CloseOnceWritten(refused);
  return false;
}

void Authenticator::Drain(const std::shared_ptr<Connection>& conn, Session& session) {
  while (!session.waiting.empty() && !session.decoding && !conn->closed()) {
    v1::Envelope& next = session.waiting.front();
    const std::string& credential = next.credential().munge();
    if (credential.empty()) {
      v1::Envelope envelope = std::move(next);
      session.waiting.pop_front();
      deliver_(conn, std::move(envelope), Identity());
    } else if (credential == session.credential) {
      v1::Envelope envelope = std::move(next);
      session.waiting.pop_front();
      if (clock_.NowMs() / 1000 >= session.expires_s) {
        conn->Reply(envelope.id(),
                    Unauthenticated("the MUNGE credential of this connection has expired; "
                                    "reconnect with a new one"),
                    nullptr);
        continue;
      }
      if (!Owned(conn, envelope, "uid " + std::to_string(session.identity.uid))) return;
      deliver_(conn, std::move(envelope), session.identity);
    } else if (credential == session.refused_credential) {
      v1::Envelope envelope = std::move(next);
      session.waiting.pop_front();
      conn->Reply(envelope.id(), session.refusal, nullptr);
    } else {
      StartDecode(conn, session, credential);
    }
  }
}

void Authenticator::StartDecode(const std::shared_ptr<Connection>& conn, Session& session,
                                const std::string& credential) {
  session.decoding = true;
  ++decodes_;
  std::weak_ptr<Connection> weak = conn;
  asio::post(workers_, [this, weak, credential] {
    auto decoded = decode_(credential);
    Identity who;
    if (decoded.ok()) {
      who.kind = Identity::Kind::kUser;
      who.uid = decoded->uid;
      who.gid = decoded->gid;
      ResolveUser(who);  // NSS may block: here, not on the io thread
    }
    asio::post(io_, [this, weak, credential, decoded, who = std::move(who)]() mutable {
      auto conn = weak.lock();
      if (!conn) return;
      auto it = sessions_.find(conn.get());
      if (it == sessions_.end()) return;
      Session& session = it->second;
      session.decoding = false;
      if (decoded.ok()) {
        session.credential = credential;
        session.identity = std::move(who);
        session.expires_s = decoded->expires_s;
      } else {
        // Anyone may send one: one line in a hundred, counted, so that forged credentials
        // cannot fill the log.
        LOG_EVERY_N(WARNING, 100) << "refused a MUNGE credential from " << conn->peer() << ": "
                                  << decoded.status().message() << " (" << google::COUNTER
                                  << " so far)";
        session.refused_credential = credential;
        session.refusal = decoded.status();
      }
      Drain(conn, session);
    });
  });
}

void Authenticator::OnClosed(const Connection* conn) { sessions_.erase(conn); }

}  // namespace snn
