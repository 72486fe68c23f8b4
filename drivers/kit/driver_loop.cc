#include "drivers/kit/driver_loop.h"

#include <glog/logging.h>

#include "drivers/kit/driver_frames.h"

namespace snn {
namespace {

// Copies a result or its error into the response.
template <typename T, typename Set>
void Answer(const Result<T>& result, v1::DriverResponse& response, Set set) {
  if (result.ok()) {
    set(*result);
  } else {
    response.set_error(result.status().message());
  }
}

}  // namespace

v1::DriverResponse HandleDriverRequest(BoardDriver& driver, const v1::DriverRequest& request) {
  v1::DriverResponse response;
  response.set_id(request.id());
  const std::string& board = request.board();
  switch (request.op_case()) {
    case v1::DriverRequest::kHello:
      if (request.hello().protocol_version() != kDriverProtocolVersion) {
        response.set_error("this driver speaks protocol version " +
                           std::to_string(kDriverProtocolVersion) + ", not " +
                           std::to_string(request.hello().protocol_version()));
      } else {
        *response.mutable_hello() = driver.Hello();
      }
      break;
    case v1::DriverRequest::kDiscover:
      for (auto& b : driver.Discover()) *response.mutable_discover()->add_boards() = std::move(b);
      break;
    case v1::DriverRequest::kPower:
      Answer(driver.Power(board, request.power().on()), response,
             [&](const auto& r) { *response.mutable_state() = r; });
      break;
    case v1::DriverRequest::kBoot:
      Answer(driver.Boot(board, request.boot().firmware()), response,
             [&](const auto& r) { *response.mutable_state() = r; });
      break;
    case v1::DriverRequest::kReset:
      Answer(driver.Reset(board), response, [&](const auto& r) { *response.mutable_state() = r; });
      break;
    case v1::DriverRequest::kHealthCheck:
      Answer(driver.HealthCheck(board), response,
             [&](const auto& r) { *response.mutable_health() = r; });
      break;
    case v1::DriverRequest::kReserve:
      Answer(driver.Reserve(board, request.reserve()), response,
             [&](const auto& r) { *response.mutable_reservation() = r; });
      break;
    case v1::DriverRequest::kRelease:
      Answer(driver.Release(board, request.release()), response,
             [&](const auto& r) { *response.mutable_state() = r; });
      break;
    case v1::DriverRequest::kStats:
      Answer(driver.Stats(board), response, [&](const auto& r) { *response.mutable_stats() = r; });
      break;
    default:
      response.set_error("an operation this driver does not know (protocol version " +
                         std::to_string(kDriverProtocolVersion) + ")");
  }
  return response;
}

int ServeDriver(BoardDriver& driver, int fd) {
  for (;;) {
    v1::DriverRequest request;
    Status read = ReadDriverFrame(fd, &request, -1);
    if (read.code() == Code::kUnavailable) return 0;  // the agent closed: done
    if (!read.ok()) {
      LOG(ERROR) << "driver: " << read.message();
      return 1;
    }
    if (Status s = WriteDriverFrame(fd, HandleDriverRequest(driver, request), -1); !s.ok()) {
      LOG(ERROR) << "driver: answering: " << s.message();
      return 1;
    }
  }
}

}  // namespace snn
