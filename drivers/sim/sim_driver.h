// The driver of simulated boards (snn-driver-sim): `--boards` boards of one mesh, whose power,
// firmware and "memory" live in files under `--state_dir`, so that a driver started again
// after a crash finds its boards as they were. A simulated board's memory is a file the task
// may write while it holds the board (SNN_SIM_BOARD_MEMORY); a reset empties it. A file
// `<id>.fault` holding a reason makes the board's health checks fail with it (fault injection).
// Managed: the task's spikes go through the agent's gateway, which enforces the budget.
// Thread contract: one thread (ServeDriver's).
#pragma once

#include <string>

#include "drivers/kit/driver_loop.h"

namespace snn {

struct SimDriverConfig {
  uint32_t boards = 1;
  std::string type = "sim-v1";
  uint32_t width = 8, height = 8, neurons_per_core = 256, ksps = 1000;
  std::string state_dir;
};

class SimDriver : public BoardDriver {
 public:
  explicit SimDriver(SimDriverConfig config);

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
  Status Check(const std::string& board) const;
  std::string File(const std::string& board, const std::string& what) const;
  v1::DriverBoardState Load(const std::string& board) const;
  Status Save(const v1::DriverBoardState& state) const;

  const SimDriverConfig config_;
};

}  // namespace snn
