// The `sim` HAL backend: an in-process simulated board with a configurable mesh, capacities and
// dead cores. It checks every configuration against dead and taken cores, as hardware would.
// Thread contract: agent io thread only.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "nodeagent/hal/board.h"

namespace snn {

class SimBoard : public Board {
 public:
  // `network_memory_bytes`: what the simulator may hold for all the networks on this board at
  // once; each task gets its cores' share of it (so a node holds at most its boards' sum,
  // however its cores are divided among tasks).
  static constexpr uint64_t kDefaultNetworkMemoryBytes = uint64_t{512} << 20;
  explicit SimBoard(v1::BoardInfo info, uint64_t network_memory_bytes = kDefaultNetworkMemoryBytes);

  // Health falls by 10 for each core that died at run time, and is 0 while the board is failed.
  v1::BoardInfo Describe() const override;
  Status Configure(const TaskKey& task, const std::vector<v1::CoreXY>& cores) override;
  void Release(const TaskKey& task) override;
  Status Reset(const TaskKey& task) override;
  uint64_t resets() const { return resets_; }
  // A LifNetwork for a model (or a SinkNetwork), processing at most the board's KSPS (at its
  // current speed) times the model's timestep in spikes a step, and holding at most the task's
  // cores' share of the board's network memory.
  Result<NetworkBuild> PrepareNetwork(const v1::Model* model, uint32_t num_cores) override;
  // Runs a calibration network flat out: the spikes a second this host simulates (the board
  // reports the smaller of that and its capacity), and one hop's latency.
  void Fingerprint() override;
  // KILL_CORE, FAIL_BOARD, HEAL_BOARD (works again at full speed), SLOW_BOARD (the simulator
  // models a slow board: its measured throughput is that share of its capacity).
  Status InjectFault(const v1::SimFaultRequest& fault) override;

  // Which task owns (x, y), for tests; nullptr if none.
  const TaskKey* Owner(uint32_t x, uint32_t y) const;

 private:
  size_t Cell(uint32_t x, uint32_t y) const { return size_t{y} * info_.width() + x; }
  Status KillCore(uint32_t x, uint32_t y);
  Status SetSpeedPercent(uint32_t percent);

  v1::BoardInfo info_;
  std::vector<bool> dead_;  // by cell
  uint32_t cores_killed_ = 0;
  bool failed_ = false;
  uint32_t speed_percent_ = 100;
  uint64_t host_ksps_ = 0;  // from Fingerprint; 0: not measured
  uint64_t network_memory_bytes_;
  uint32_t latency_us_ = 0;
  uint64_t resets_ = 0;
  std::vector<std::optional<TaskKey>> owner_;  // by cell
  std::map<TaskKey, std::vector<size_t>> owners_;
};

}  // namespace snn
