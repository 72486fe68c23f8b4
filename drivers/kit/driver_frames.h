// Frames of the board driver protocol (proto/driver.proto): a 4-byte big-endian length, then a
// message, at most kMaxDriverFrame bytes. Blocking reads and writes on a stream socket, each
// with a deadline; both the agent and every driver use them.
#pragma once

#include <google/protobuf/message_lite.h>

#include <cstdint>

#include "common/base/status.h"

namespace snn {

inline constexpr uint32_t kMaxDriverFrame = 4u << 20;

// Writes `message` as one frame. `timeout_ms` < 0: no deadline.
Status WriteDriverFrame(int fd, const google::protobuf::MessageLite& message, int timeout_ms);
// Reads one frame into `message`. Unavailable at a clean end of stream (the peer closed
// between frames), DeadlineExceeded after `timeout_ms` (< 0: none), InvalidArgument for a
// frame that is too large or does not parse.
Status ReadDriverFrame(int fd, google::protobuf::MessageLite* message, int timeout_ms);

}  // namespace snn
