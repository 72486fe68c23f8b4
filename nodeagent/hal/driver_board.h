// A board that a driver process runs (docs/drivers.md), pass-through: the task's own SDK talks
// to it at the endpoints its reservation names, so the agent loads no network on it. The agent
// keeps its core bookkeeping (a pass-through board is granted whole; its boards-file mesh is
// normally 1x1) and its health as the driver's last check found it.
// Thread contract: agent io thread only.
#pragma once

#include <map>
#include <string>

#include "common/daemon/board_drivers.h"
#include "nodeagent/hal/sim_board.h"

namespace snn {

class DriverBoard : public SimBoard {
 public:
  DriverBoard(v1::BoardInfo info, BoardDriverRef ref);

  const BoardDriverRef* driver() const override { return &ref_; }
  // Health 0, with the check's output, after a failed check; the boards file's otherwise.
  v1::BoardInfo Describe() const override;
  // A job's network cannot be loaded here (the task's SDK loads the board); without one, a
  // plane that takes no spikes.
  Result<NetworkBuild> PrepareNetwork(const v1::Model* model, uint32_t num_cores) override;
  void Fingerprint() override {}  // nothing of it runs on this host to measure
  Status InjectFault(const v1::SimFaultRequest& fault) override;

  void SetHealth(bool healthy, std::string output);
  bool healthy() const { return healthy_; }

  // Its power as the agent last set it: on (booted), off (suspended while idle), or on the way
  // between (a power-off or a boot the driver is doing).
  enum class Power { kOn, kOff, kSuspending, kBooting };
  Power power() const { return power_; }
  void SetPower(Power power) { power_ = power; }
  void SetAttributes(std::map<std::string, std::string> attributes) {
    attributes_ = std::move(attributes);
  }
  // Driver calls for it under way, and when the last one (or its start) ended: it is idle when
  // no task holds it, no call is under way, and this was long enough ago.
  int calls = 0;
  int64_t last_used_ms = 0;

 private:
  const BoardDriverRef ref_;
  bool healthy_ = true;
  std::string output_;
  Power power_ = Power::kOn;
  std::map<std::string, std::string> attributes_;
};

}  // namespace snn
