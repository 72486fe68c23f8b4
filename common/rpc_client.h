// A blocking RPC client with a deadline on every operation, for snnctl, tests and tools.
// One call at a time; not thread-safe (use one client per thread).
#pragma once

#include <google/protobuf/message.h>

#include <chrono>
#include <memory>
#include <string>

#include "common/address.h"
#include "common/asio.h"
#include "common/clock.h"
#include "common/frame.h"
#include "common/status.h"

namespace snn {

class RpcClient {
 public:
  // The timeout runs on `clock` (null: the system clock).
  explicit RpcClient(std::chrono::milliseconds timeout,
                     size_t max_frame_bytes = kDefaultMaxFrameBytes, const Clock* clock = nullptr);
  ~RpcClient();

  Status Connect(const HostPort& address);
  void set_credential(v1::Credential credential) { credential_ = std::move(credential); }

  // Sends one request and waits for its response (or the deadline).
  Result<v1::Envelope> CallRaw(const std::string& method, const google::protobuf::Message& request);

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
  // Runs the io_context until `done` or the deadline; closes the socket on timeout.
  bool RunUntil(const bool& done);

  const std::chrono::milliseconds timeout_;
  const size_t max_frame_bytes_;
  const SystemClock default_clock_;
  const Clock& clock_;
  asio::io_context io_;
  tcp::socket socket_;
  std::string target_;
  uint64_t next_id_ = 1;
  v1::Credential credential_;
};

}  // namespace snn
