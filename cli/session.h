// The client side of a call to the master, shared by snnctl's commands: a TLS session (the
// master's certificate checked against the cluster's CA), or the user's shared connection when
// one is open (cli/shared_connection.h), whose requests carry a MUNGE credential of the caller;
// one-line errors, and a one-shot call.
#pragma once

#include <ostream>
#include <string>
#include <type_traits>

#include "cli/cli_basics.h"
#include "cli/cli_options.h"
#include "cli/shared_connection.h"
#include "common/base/status.h"
#include "common/identity/munge.h"
#include "common/rpc/address.h"
#include "common/rpc/rpc_client.h"
#include "common/rpc/tls.h"

namespace snn {

class Session {
 public:
  explicit Session(const CliOptions& o)
      : options_(o),
        client_(std::chrono::milliseconds(o.timeout_ms), kDefaultMaxFrameBytes, &CliClock()) {}

  Status Open() {
    auto masters = ParseHostPortList(options_.master);
    if (!masters.ok()) return InvalidArgument("--master: " + masters.status().message());
    v1::Credential credential;
    credential.set_tenant(options_.tenant);
    if (options_.auth == "none") {
      credential.set_user(options_.user);  // a master with --auth=none believes it
    } else {
      client_.set_minter([socket = options_.munge_socket] { return MungeEncode(socket); });
      client_.set_credential(credential);
      if (UseSharedConnection(options_, client_)) return Status::Ok();
      auto tls = MakeClientTls({options_.ca_file, "", ""});
      if (!tls.ok()) {
        return Status(tls.status().code(),
                      tls.status().message() + " (set --ca-file or SNN_CA_FILE)");
      }
      client_.set_tls(*tls);
    }
    client_.set_credential(credential);
    return client_.ConnectAny(std::move(masters).value());
  }
  RpcClient& client() { return client_; }

 private:
  const CliOptions& options_;
  RpcClient client_;
};

// One call of `method` on a session of its own.
template <typename Request, typename Response>
Result<Response> Call(const CliOptions& o, const RpcMethod<Request, Response>& method,
                      const std::type_identity_t<Request>& request) {
  Session session(o);
  SNN_RETURN_IF_ERROR(session.Open());
  return session.client().Call(method, request);
}

}  // namespace snn
