// The driver side of the board driver protocol: a driver implements BoardDriver for its board
// type, and its main() hands it to ServeDriver, which answers the agent's requests on fd 3 until
// the agent closes it. A request for an unknown board, or one the driver refuses, is answered
// with its error; a malformed frame ends the driver (the agent starts it again).
// Thread contract: ServeDriver calls the driver from the thread it runs on, one call at a time.
#pragma once

#include <string>
#include <vector>

#include "common/base/status.h"
#include "proto/driver.pb.h"

namespace snn {

inline constexpr uint32_t kDriverProtocolVersion = 1;
inline constexpr int kDriverFd = 3;  // where a driver finds its connection to the agent

class BoardDriver {
 public:
  virtual ~BoardDriver() = default;
  virtual v1::DriverHelloReply Hello() = 0;
  virtual std::vector<v1::DriverBoard> Discover() = 0;
  virtual Result<v1::DriverBoardState> Power(const std::string& board, bool on) = 0;
  // Loads the firmware and waits until the board runs it (powering it on first if it is off).
  virtual Result<v1::DriverBoardState> Boot(const std::string& board,
                                            const std::string& firmware) = 0;
  // Back to the state just after boot: nothing a task left on it survives.
  virtual Result<v1::DriverBoardState> Reset(const std::string& board) = 0;
  virtual Result<v1::DriverHealthReply> HealthCheck(const std::string& board) = 0;
  virtual Result<v1::DriverReservation> Reserve(const std::string& board,
                                                const v1::DriverReserve& request) = 0;
  // Ends a reservation and scrubs the board (as Reset).
  virtual Result<v1::DriverBoardState> Release(const std::string& board,
                                               const v1::DriverRelease& request) = 0;
  virtual Result<v1::DriverStatsReply> Stats(const std::string& board) = 0;
};

// The answer to one request (exposed for tests).
v1::DriverResponse HandleDriverRequest(BoardDriver& driver, const v1::DriverRequest& request);

// Serves requests on `fd` until the agent closes it: 0; a broken frame or stream: 1.
int ServeDriver(BoardDriver& driver, int fd = kDriverFd);

}  // namespace snn
