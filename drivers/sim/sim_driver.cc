#include "drivers/sim/sim_driver.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/base/file_util.h"

namespace snn {
namespace {

// A state file's contents; "" when there is none.
std::string Slurp(const std::string& path) {
  auto text = ReadWholeFile(path, "a simulated board's state");
  return text.ok() ? *text : "";
}

}  // namespace

SimDriver::SimDriver(SimDriverConfig config) : config_(std::move(config)) {}

v1::DriverHelloReply SimDriver::Hello() {
  v1::DriverHelloReply hello;
  hello.set_protocol_version(kDriverProtocolVersion);
  hello.set_driver("snn-driver-sim 1");
  hello.set_board_type(config_.type);
  hello.set_pass_through(false);
  hello.set_enforces_budget(false);  // the agent's gateway does
  return hello;
}

Status SimDriver::Check(const std::string& board) const {
  for (uint32_t i = 0; i < config_.boards; ++i) {
    if (board == "sim" + std::to_string(i)) return Status::Ok();
  }
  return NotFound("no board " + board + " on this driver");
}

std::string SimDriver::File(const std::string& board, const std::string& what) const {
  return config_.state_dir + "/" + board + "." + what;
}

v1::DriverBoardState SimDriver::Load(const std::string& board) const {
  v1::DriverBoardState state;
  state.set_id(board);
  state.set_power(v1::BOARD_OFF);
  std::istringstream in(Slurp(File(board, "state")));
  std::string power, firmware;
  if (in >> power) {
    state.set_power(power == "booted" ? v1::BOARD_BOOTED
                    : power == "on"   ? v1::BOARD_ON
                                      : v1::BOARD_OFF);
  }
  if (in >> firmware && state.power() == v1::BOARD_BOOTED) state.set_firmware(firmware);
  return state;
}

Status SimDriver::Save(const v1::DriverBoardState& state) const {
  const char* power = state.power() == v1::BOARD_BOOTED ? "booted"
                      : state.power() == v1::BOARD_ON   ? "on"
                                                        : "off";
  return WriteFileAtomic(File(state.id(), "state"),
                         std::string(power) + " " + state.firmware() + "\n", 0600);
}

std::vector<v1::DriverBoard> SimDriver::Discover() {
  std::vector<v1::DriverBoard> out;
  for (uint32_t i = 0; i < config_.boards; ++i) {
    v1::DriverBoard d;
    *d.mutable_state() = Load("sim" + std::to_string(i));
    (*d.mutable_attributes())["simulated"] = "true";
    d.set_width(config_.width);
    d.set_height(config_.height);
    d.set_neurons_per_core(config_.neurons_per_core);
    d.set_ksps(config_.ksps);
    out.push_back(std::move(d));
  }
  return out;
}

Result<v1::DriverBoardState> SimDriver::Power(const std::string& board, bool on) {
  SNN_RETURN_IF_ERROR(Check(board));
  v1::DriverBoardState state = Load(board);
  if (!on) {
    state.set_power(v1::BOARD_OFF);
    state.clear_firmware();
    std::filesystem::remove(File(board, "memory"));
  } else if (state.power() == v1::BOARD_OFF) {
    state.set_power(v1::BOARD_ON);
  }
  SNN_RETURN_IF_ERROR(Save(state));
  return state;
}

Result<v1::DriverBoardState> SimDriver::Boot(const std::string& board,
                                             const std::string& firmware) {
  SNN_RETURN_IF_ERROR(Check(board));
  v1::DriverBoardState state = Load(board);
  state.set_power(v1::BOARD_BOOTED);
  state.set_firmware(firmware.empty() ? "sim" : firmware);
  state.set_boot_ms(0);  // a simulated board boots at once
  std::filesystem::remove(File(board, "memory"));
  SNN_RETURN_IF_ERROR(Save(state));
  return state;
}

Result<v1::DriverBoardState> SimDriver::Reset(const std::string& board) {
  SNN_RETURN_IF_ERROR(Check(board));
  std::error_code ec;
  std::filesystem::remove(File(board, "memory"), ec);
  if (ec) return Internal("cannot clear board " + board + "'s memory: " + ec.message());
  return Load(board);
}

Result<v1::DriverHealthReply> SimDriver::HealthCheck(const std::string& board) {
  SNN_RETURN_IF_ERROR(Check(board));
  v1::DriverHealthReply reply;
  const v1::DriverBoardState state = Load(board);
  std::string fault = Slurp(File(board, "fault"));
  while (!fault.empty() && (fault.back() == '\n' || fault.back() == ' ')) fault.pop_back();
  if (!fault.empty()) {
    reply.set_output(fault);
  } else if (state.power() != v1::BOARD_BOOTED) {
    reply.set_output(state.power() == v1::BOARD_OFF ? "powered off" : "not booted");
  } else {
    reply.set_healthy(true);
    reply.set_output("simulated " + std::to_string(config_.width) + "x" +
                     std::to_string(config_.height) + " mesh, firmware " + state.firmware());
  }
  return reply;
}

Result<v1::DriverReservation> SimDriver::Reserve(const std::string& board,
                                                 const v1::DriverReserve& request) {
  SNN_RETURN_IF_ERROR(Check(board));
  if (Load(board).power() != v1::BOARD_BOOTED) {
    return FailedPrecondition("board " + board + " is not booted");
  }
  // The board's memory, empty, the task's own while it holds the board.
  const std::string memory = File(board, "memory");
  SNN_RETURN_IF_ERROR(WriteFileAtomic(memory, "", 0600));
  if (chown(memory.c_str(), request.uid(), request.gid()) != 0) {
    return Internal("cannot give board " + board + "'s memory to uid " +
                    std::to_string(request.uid()));
  }
  v1::DriverReservation r;
  (*r.mutable_env())["SNN_SIM_BOARD_MEMORY"] = memory;
  return r;
}

Result<v1::DriverBoardState> SimDriver::Release(const std::string& board,
                                                const v1::DriverRelease&) {
  return Reset(board);
}

Result<v1::DriverStatsReply> SimDriver::Stats(const std::string& board) {
  SNN_RETURN_IF_ERROR(Check(board));
  v1::DriverStatsReply stats;
  std::error_code ec;
  const auto size = std::filesystem::file_size(File(board, "memory"), ec);
  (*stats.mutable_counters())["memory_bytes"] = ec ? 0 : size;
  return stats;
}

}  // namespace snn
