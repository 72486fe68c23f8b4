// Turns what a connection proves into the Identity each request is dispatched with.
// - A TLS peer with a node certificate is that node, for every request on the connection, unless
//   the certificate was revoked (checked on every request: a revocation ends a live session).
// - Any other request must carry a MUNGE credential. It is decoded by munged (which refuses a
//   replayed, expired, future or forged one) on a worker thread, never on the io thread, so a
//   decode costs the master no serving time and decodes of different connections overlap. The
//   identity is kept for that connection while its requests carry the same credential and it
//   has not expired: TLS binds the later requests to the peer that proved it, and munged's replay
//   cache keeps the credential from working on any other connection.
// - A request without any proof is dispatched as nobody (only enrolment accepts that).
// Requests of one connection are dispatched in the order they arrived.
// In --auth=none mode (development, loopback only) the request's claimed user or node is
// believed.
// Thread contract: OnRequest and OnClosed on the io thread; decodes run on the worker pool.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "common/base/clock.h"
#include "common/identity/identity.h"
#include "common/identity/munge.h"
#include "common/rpc/asio.h"
#include "common/rpc/connection.h"

namespace snn {

class Authenticator {
 public:
  enum class Mode { kMunge, kNone };
  using Decode = std::function<Result<MungeIdentity>(const std::string& credential)>;
  using Deliver = std::function<void(const std::shared_ptr<Connection>&, v1::Envelope, Identity)>;

  Authenticator(asio::io_context& io, const Clock& clock, Mode mode, Decode decode, Deliver deliver,
                size_t threads = 2);
  ~Authenticator();

  // Checks a node's certificate beyond the CA's signature (revoked generations): Ok, or why
  // the connection is refused.
  using NodeCheck = std::function<Status(const PeerCertificate&)>;
  void set_node_check(NodeCheck check) { node_check_ = std::move(check); }

  void OnRequest(const std::shared_ptr<Connection>& conn, v1::Envelope envelope);
  void OnClosed(const Connection* conn);
  uint64_t decodes() const { return decodes_; }

 private:
  // Requests one connection may pipeline while its credential is decoded; more closes it.
  static constexpr size_t kMaxWaiting = 1024;
  struct Session {
    std::string credential;  // the one that proved `identity`
    Identity identity;
    int64_t expires_s = 0;
    std::string refused_credential;  // the last one munged refused, and why
    Status refusal;
    bool decoding = false;
    std::deque<v1::Envelope> waiting;
  };
  void Drain(const std::shared_ptr<Connection>& conn, Session& session);
  void StartDecode(const std::shared_ptr<Connection>& conn, Session& session,
                   const std::string& credential);
  Identity Claimed(const v1::Credential& claim) const;
  // Tells the connection's server who holds it (for its per-owner limits); false when it was
  // refused there: the request got the reason and the connection closes.
  bool Owned(const std::shared_ptr<Connection>& conn, const v1::Envelope& envelope,
             const std::string& owner);

  asio::io_context& io_;
  const Clock& clock_;
  const Mode mode_;
  Decode decode_;
  Deliver deliver_;
  NodeCheck node_check_;
  std::unordered_map<const Connection*, Session> sessions_;  // io thread only
  uint64_t decodes_ = 0;
  asio::thread_pool workers_;  // last: joined first
};

}  // namespace snn
