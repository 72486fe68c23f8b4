// A blocking RPC client with a deadline on every operation, for snnctl, tests and tools.
// One call at a time; not thread-safe (use one client per thread).
#pragma once

#include <google/protobuf/message.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common/base/clock.h"
#include "common/base/status.h"
#include "common/rpc/address.h"
#include "common/rpc/asio.h"
#include "common/rpc/frame.h"
#include "common/rpc/rpc_methods.h"
#include "common/rpc/tls.h"

namespace snn {

class RpcClient {
 public:
  // The timeout runs on `clock` (null: the system clock).
  explicit RpcClient(std::chrono::milliseconds timeout,
                     size_t max_frame_bytes = kDefaultMaxFrameBytes, const Clock* clock = nullptr);
  ~RpcClient();

  // With a TLS context, Connect also does the handshake and checks the peer is the master.
  void set_tls(std::shared_ptr<ssl::context> tls) { tls_context_ = std::move(tls); }
  Status Connect(const HostPort& address);
  // Connects to the first of `masters` that answers. Calls then follow the leader: a standby's
  // redirect (or, while none leads, a short wait and the next master) sends the request again
  // to the leader, within the timeout. Only a request no master has taken is sent again (a
  // standby takes none). Connect alone follows a redirect too, from the one master it names.
  // A call that finds the connection lost (an earlier call failed, or the leader a standby
  // named could not be reached) first connects again to the first configured master that
  // answers; the failed call itself is not sent again (its master may have taken it).
  Status ConnectAny(std::vector<HostPort> masters);
  // Connects to a relay on a Unix socket (snnctl's shared connection, cli/shared_connection.h)
  // that carries frames to the master and back: no TLS here, the relay holds it. Its peer must
  // run as this process's user, or this refuses it.
  Status ConnectLocal(const std::string& socket_path);
  void set_credential(v1::Credential credential) { credential_ = std::move(credential); }
  // Connected, and since the last call the peer has neither closed the connection nor sent
  // anything unasked: a kept connection fit for the next call.
  bool Usable();
  // HOST:PORT of the master connected to (after a redirect: the leader).
  const std::string& target() const { return target_; }
  // Mints the credential (MUNGE) each request carries: once per connection, and again when the
  // one in use is older than `reuse_ms`.
  using Minter = std::function<Result<std::string>()>;
  void set_minter(Minter mint, int64_t reuse_ms = 60000) {
    mint_ = std::move(mint);
    reuse_ms_ = reuse_ms;
  }

  // Sends one request and waits for its response (or the deadline).
  Result<v1::Envelope> CallRaw(const std::string& method, const google::protobuf::Message& request);

  // Sends a request framed elsewhere (a relay's client's), with its own method, payload and
  // credential (this client's minter is not used), following the leader as CallRaw does. The
  // response's id is this client's: the caller puts back its own.
  Result<v1::Envelope> Forward(v1::Envelope request);

  // Calls `method` (common/rpc/rpc_methods.h) with its request type and parses its response type.
  template <typename Request, typename Response>
  Result<Response> Call(const RpcMethod<Request, Response>& method,
                        const std::type_identity_t<Request>& request) {
    return Call<Response>(std::string(method.name), request);
  }

  // By name, with any message: for tests that send a method what it does not expect.
  template <typename Response>
  Result<Response> Call(const std::string& method, const google::protobuf::Message& request) {
    auto envelope = CallRaw(method, request);
    if (!envelope.ok()) return envelope.status();
    if (envelope->code() != 0)
      return Status(static_cast<Code>(envelope->code()), envelope->error());
    Response response;
    if (!response.ParseFromString(envelope->payload())) {
      return Internal("malformed " + method + " response");
    }
    return response;
  }

 private:
  // Sends `request` (minting its credential first when `mint`) and follows a standby's redirect.
  Result<v1::Envelope> Exchange(v1::Envelope request, bool mint);
  Result<v1::Envelope> CallOnce(v1::Envelope& request, bool mint);
  // Drops the connection (if any).
  void Disconnect();
  // Drops the connection and connects to `address`.
  Status Reconnect(const HostPort& address);
  // Connects to the first configured master that answers, from the last one used on.
  Status ReconnectToConfigured();
  bool connected() const;
  // Runs the io_context until `done` or the deadline; closes the socket on timeout.
  bool RunUntil(const bool& done);
  Status Handshake();
  template <typename Fn>
  void OnStream(Fn&& fn) {
    if (local_) return fn(*local_);
    WithStream(tls_, socket_, std::forward<Fn>(fn));
  }
  void CloseSockets();

  const std::chrono::milliseconds timeout_;
  const size_t max_frame_bytes_;
  const SystemClock default_clock_;
  const Clock& clock_;
  asio::io_context io_;
  tcp::socket socket_;
  std::shared_ptr<ssl::context> tls_context_;
  std::unique_ptr<TlsStream> tls_;  // over socket_'s connection once the handshake is done
  std::unique_ptr<asio::local::stream_protocol::socket> local_;  // to a relay, instead
  std::string target_;
  std::string host_;               // target_'s host, as the master's certificate must name it
  std::vector<HostPort> masters_;  // with ConnectAny: every master of the group
  size_t current_ = 0;             // the one connected to
  uint64_t next_id_ = 1;
  v1::Credential credential_;
  Minter mint_;
  int64_t reuse_ms_ = 60000;
  int64_t minted_ms_ = 0;
};

}  // namespace snn
