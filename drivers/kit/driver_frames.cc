#include "drivers/kit/driver_frames.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/base/clock.h"

namespace snn {
namespace {

// Waits until `fd` is ready for `events` or the deadline passes (real time: this is I/O).
Status Await(int fd, short events, const RealDeadline& deadline, bool timed) {
  for (;;) {
    int wait_ms = -1;
    if (timed) {
      if (deadline.passed()) return DeadlineExceeded("the driver did not answer in time");
      wait_ms = static_cast<int>(std::max<int64_t>(1, deadline.left_ms()));
    }
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, wait_ms);
    if (n > 0) return Status::Ok();
    if (n < 0 && errno != EINTR) return Unavailable(std::string("poll: ") + strerror(errno));
  }
}

Status Transfer(int fd, char* data, size_t size, bool writing, const RealDeadline& deadline,
                bool timed) {
  size_t done = 0;
  while (done < size) {
    SNN_RETURN_IF_ERROR(Await(fd, writing ? POLLOUT : POLLIN, deadline, timed));
    const ssize_t n = writing ? send(fd, data + done, size - done, MSG_NOSIGNAL)
                              : read(fd, data + done, size - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n == 0 && !writing) return Unavailable("the other end closed the connection");
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    return Unavailable(std::string(writing ? "write: " : "read: ") + strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

Status WriteDriverFrame(int fd, const google::protobuf::MessageLite& message, int timeout_ms) {
  const size_t size = message.ByteSizeLong();
  if (size > kMaxDriverFrame) return InvalidArgument("a driver message over 4 MiB");
  std::string frame(4 + size, '\0');
  frame[0] = static_cast<char>(size >> 24);
  frame[1] = static_cast<char>(size >> 16);
  frame[2] = static_cast<char>(size >> 8);
  frame[3] = static_cast<char>(size);
  if (!message.SerializeToArray(frame.data() + 4, static_cast<int>(size))) {
    return Internal("cannot serialize a driver message");
  }
  const RealDeadline deadline(timeout_ms);
  return Transfer(fd, frame.data(), frame.size(), true, deadline, timeout_ms >= 0);
}

Status ReadDriverFrame(int fd, google::protobuf::MessageLite* message, int timeout_ms) {
  const RealDeadline deadline(timeout_ms);
  unsigned char header[4];
  SNN_RETURN_IF_ERROR(
      Transfer(fd, reinterpret_cast<char*>(header), 4, false, deadline, timeout_ms >= 0));
  const uint32_t size = (uint32_t{header[0]} << 24) | (uint32_t{header[1]} << 16) |
                        (uint32_t{header[2]} << 8) | header[3];
  if (size > kMaxDriverFrame) {
    return InvalidArgument("a driver frame of " + std::to_string(size) + " bytes (at most 4 MiB)");
  }
  std::string body(size, '\0');
  SNN_RETURN_IF_ERROR(Transfer(fd, body.data(), size, false, deadline, timeout_ms >= 0));
  if (!message->ParseFromString(body)) return InvalidArgument("a driver frame that does not parse");
  return Status::Ok();
}

}  // namespace snn
