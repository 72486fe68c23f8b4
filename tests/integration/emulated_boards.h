// Ethernet-attached boards for tests with real daemons: snn-board-emu processes on loopback
// addresses of their own, the reference driver's boards file for them, and the agent's boards
// file that gives them to that driver (pass-through boards of one type).
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "drivers/ether/udp_exchange.h"
#include "snn_paths.h"
#include "tests/integration/cluster.h"
#include "tests/test_util/process.h"

namespace snn::testing {

struct EmulatedBoard {
  std::string address;
  uint16_t mgmt_port = 0, data_port = 0;
  pid_t pid = -1;
  HostPort management() const { return HostPort{address, mgmt_port}; }
  std::string data() const { return address + ":" + std::to_string(data_port); }
};

class EmulatedBoards {
 public:
  // `count` boards at 127.0.0.2, 127.0.0.3, ...; each boots in 50 ms. Files under `dir` start
  // with `name` (the driver's name in the agent's boards file).
  // `devices`: a device node per board (empty: none) the driver hands to the task's user.
  EmulatedBoards(const std::string& dir, int count, const std::string& name = "ether",
                 std::vector<std::string> devices = {})
      : dir_(dir), name_(name), devices_(std::move(devices)) {
    devices_.resize(static_cast<size_t>(count));
    std::ofstream config(dir + "/" + name + ".yaml");
    config << "boards:\n";
    for (int i = 0; i < count; ++i) {
      EmulatedBoard board;
      board.address = "127.0.0." + std::to_string(2 + i);
      const std::string ports = dir + "/" + name + "-emu" + std::to_string(i) + ".ports";
      const std::string log = dir + "/" + name + "-emu" + std::to_string(i) + ".log";
      board.pid =
          SpawnLogged({SNN_BOARD_EMU_BIN, "--address=" + board.address, "--port_file=" + ports,
                       "--boot_ms=50", "--serial=emu-" + std::to_string(i)},
                      log, log);
      if (board.pid > 0 && TestCluster::WaitUntil([&] { return std::filesystem::exists(ports); })) {
        std::istringstream in(ReadFile(ports));
        in >> board.mgmt_port >> board.data_port;
      }
      config << "  - id: eth" << i << "\n    management: " << board.address << ":"
             << board.mgmt_port << "\n    data: " << board.data() << "\n    firmware: fw-2.4\n";
      if (!devices_[i].empty()) config << "    devices: [" << devices_[i] << "]\n";
      boards_.push_back(board);
    }
  }
  ~EmulatedBoards() {
    for (const EmulatedBoard& board : boards_) {
      if (board.pid <= 0) continue;
      kill(board.pid, SIGKILL);
      waitpid(board.pid, nullptr, 0);
    }
  }
  EmulatedBoards(const EmulatedBoards&) = delete;
  EmulatedBoards& operator=(const EmulatedBoards&) = delete;

  bool started() const {
    for (const EmulatedBoard& board : boards_) {
      if (board.data_port == 0) return false;
    }
    return true;
  }
  const std::vector<EmulatedBoard>& boards() const { return boards_; }

  // The agent's boards file: every board, of type `type`, run by snn-driver-ether, with its
  // device node when `list_devices`.
  std::string AgentBoards(const std::string& type = "ether-v1", bool list_devices = true) const {
    std::string out = "boards:\n";
    for (size_t i = 0; i < boards_.size(); ++i) {
      out += "  - {type: " + type + ", mesh: 1x1, ksps: 1000, streams: 1, driver: " + name_ +
             ", board: eth" + std::to_string(i) +
             (list_devices && !devices_[i].empty() ? ", devices: [" + devices_[i] + "]" : "") +
             "}\n";
    }
    return out + "drivers:\n  " + name_ + ":\n    command: [\"" + SNN_DRIVER_ETHER_BIN +
           "\", \"--boards=" + dir_ + "/" + name_ + ".yaml\", \"--board_type=" + type +
           "\"]\n    aliases: {SLURM_FPGA_IPS: hosts}\n";
  }

  // What the board's management port answers `request` with ("" if nothing).
  std::string Manage(size_t i, const std::string& request) const {
    auto answer = UdpExchange(boards_[i].management(), request, 1000, 5);
    return answer.ok() ? *answer : "";
  }

 private:
  std::string dir_, name_;
  std::vector<std::string> devices_;
  std::vector<EmulatedBoard> boards_;
};

}  // namespace snn::testing
