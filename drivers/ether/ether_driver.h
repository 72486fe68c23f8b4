// The reference driver for Ethernet-attached boards (snn-driver-ether): each board has a
// management endpoint (power, boot, reset, health: what a BMC answers) and a data endpoint
// that the task's SDK talks to directly (pass-through). The boards are listed in a file:
//   boards:
//     - id: eth0
//       management: 127.0.0.5:41000
//       data: 127.0.0.5:41001
//       firmware: fw-2.4            # booted when none is asked for
//       attributes: {rev: "3"}
//       devices: [/dev/ttyUSB0]     # optional: handed to the task's user while it holds the board
// The tests and the demo point it at snn-board-emu processes; real boards with a management
// port of this protocol need only their addresses changed. A vendor driver is modelled on it.
// Thread contract: one thread (ServeDriver's).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/rpc/address.h"
#include "drivers/kit/driver_loop.h"

namespace snn {

struct EtherBoardConfig {
  std::string id;
  HostPort management;
  HostPort data;
  std::string firmware = "default";
  std::map<std::string, std::string> attributes;
  // Device nodes that are part of the board (a USB console or data path beside Ethernet): the
  // task's user's while it holds the board (mode 0600), root's again when it is released.
  std::vector<std::string> devices;
};

// Reads the boards file; one line naming the board and field for what is wrong.
Result<std::vector<EtherBoardConfig>> LoadEtherBoards(const std::string& path);

class EtherDriver : public BoardDriver {
 public:
  // Boots wait on `clock` for the board to come up, at most `boot_timeout_ms`.
  // `board_type`: what job files ask for to get these boards (ether-v1 by default).
  EtherDriver(std::vector<EtherBoardConfig> boards, const Clock& clock,
              int64_t boot_timeout_ms = 120000, std::string board_type = "ether-v1");

  v1::DriverHelloReply Hello() override;
  std::vector<v1::DriverBoard> Discover() override;
  Result<v1::DriverBoardState> Power(const std::string& board, bool on) override;
  Result<v1::DriverBoardState> Boot(const std::string& board, const std::string& firmware) override;
  Result<v1::DriverBoardState> Reset(const std::string& board) override;
  Result<v1::DriverHealthReply> HealthCheck(const std::string& board) override;
  Result<v1::DriverReservation> Reserve(const std::string& board,
                                        const v1::DriverReserve& request) override;
  Result<v1::DriverBoardState> Release(const std::string& board,
                                       const v1::DriverRelease& request) override;
  Result<v1::DriverStatsReply> Stats(const std::string& board) override;

 private:
  Result<const EtherBoardConfig*> Find(const std::string& board) const;
  // The management endpoint's STATUS, parsed.
  Result<v1::DriverBoardState> State(const EtherBoardConfig& board);

  const std::vector<EtherBoardConfig> boards_;
  const Clock& clock_;
  const int64_t boot_timeout_ms_;
  const std::string board_type_;
  std::map<std::string, std::string> reserved_by_;  // board id -> task
};

}  // namespace snn
