// Where a request's answer goes: an RPC connection (common/rpc/connection.h), or an HTTP exchange
// that turns the answer into JSON (master/http/). The method router and its handlers answer
// through this, so a method behaves the same whichever way it was called.
// Thread contract: Reply on the thread that serves the sink (the io thread).
#pragma once

#include <google/protobuf/message.h>

#include <cstdint>
#include <string>

#include "common/base/status.h"

namespace snn {

class ReplySink {
 public:
  virtual ~ReplySink() = default;
  // Answers `request_id`; `response` may be null when status is an error.
  virtual void Reply(uint64_t request_id, const Status& status,
                     const google::protobuf::Message* response) = 0;
  // Who is at the other end, for logs ("127.0.0.1:5512").
  virtual const std::string& peer() const = 0;
};

}  // namespace snn
