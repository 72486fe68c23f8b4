// The client side of a call to the master, shared by snnctl's commands: a session with the
// caller's credential, one-line errors, and a one-shot call.
#pragma once

#include <ostream>
#include <string>

#include "cli/snnctl.h"
#include "common/address.h"
#include "common/rpc_client.h"

namespace snn {

class Session {
 public:
  explicit Session(const CliOptions& o)
      : options_(o), client_(std::chrono::milliseconds(o.timeout_ms)) {}

  Status Open() {
    auto address = ParseHostPort(options_.master);
    if (!address.ok()) return InvalidArgument("--master: " + address.status().message());
    SNN_RETURN_IF_ERROR(client_.Connect(*address));
    v1::Credential credential;
    credential.set_user(options_.user);
    credential.set_tenant(options_.tenant);
    client_.set_credential(credential);
    return Status::Ok();
  }
  RpcClient& client() { return client_; }

 private:
  const CliOptions& options_;
  RpcClient client_;
};

inline int Fail(std::ostream& err, const Status& status) {
  err << "snnctl: " << status.message() << "\n";
  return 1;
}

template <typename Response>
Result<Response> Call(const CliOptions& o, const std::string& method,
                      const google::protobuf::Message& request) {
  Session session(o);
  SNN_RETURN_IF_ERROR(session.Open());
  return session.client().Call<Response>(method, request);
}

}  // namespace snn
