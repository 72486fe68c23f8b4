#include "nodeagent/hal/driver_board.h"

namespace snn {

DriverBoard::DriverBoard(v1::BoardInfo info, BoardDriverRef ref)
    : SimBoard(std::move(info)), ref_(std::move(ref)) {}

v1::BoardInfo DriverBoard::Describe() const {
  v1::BoardInfo info = SimBoard::Describe();
  info.set_measured_ksps(0);
  info.set_latency_us(0);
  if (!healthy_) {
    info.set_health(0);
    info.set_health_detail(output_);
  }
  info.set_power(power_ == Power::kOff || power_ == Power::kSuspending ? "off" : "on");
  // The driver knows the board: its attributes take the place of the boards file's.
  for (const auto& [name, value] : attributes_) (*info.mutable_attributes())[name] = value;
  return info;
}

Result<NetworkBuild> DriverBoard::PrepareNetwork(const v1::Model* model, uint32_t num_cores) {
  if (model != nullptr) {
    return InvalidArgument("board " + ref_.board + " is pass-through (driver " + ref_.driver +
                           "): the task's own SDK loads its network; leave the job's model out");
  }
  return SimBoard::PrepareNetwork(nullptr, num_cores);
}

Status DriverBoard::InjectFault(const v1::SimFaultRequest&) {
  return FailedPrecondition("board " + ref_.board + " is run by driver " + ref_.driver +
                            ": faults come from its health checks, not snnctl node fault");
}

void DriverBoard::SetHealth(bool healthy, std::string output) {
  healthy_ = healthy;
  output_ = std::move(output);
}

}  // namespace snn
