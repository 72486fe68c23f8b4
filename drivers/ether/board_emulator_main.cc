// snn-board-emu: one Ethernet-attached board, emulated, for the reference driver's tests and the
// demo. It answers on two UDP ports of its own address, as such boards do:
//   management (a BMC: answers whatever the power state)
//     STATUS                 -> "power=on|off booted=0|1 firmware=F boot_ms=N"
//     POWER ON | POWER OFF   -> STATUS (off forgets the firmware and the memory)
//     BOOT F                 -> "booting"; the board runs F --boot_ms later (powering on first)
//     RESET                  -> "reset" (the memory is cleared; the firmware keeps running)
//     HEALTH                 -> "ok ..." or "fail REASON"
//     FAULT REASON | FAULT none   (tests: the next health checks fail with REASON, or pass)
//     STATS                  -> "packets_in=N packets_out=M" (data packets received, answered)
//   data (the SDK's protocol; only a booted board answers)
//     PING -> PONG;  ECHO X -> X;  LOAD KEY VALUE -> "loaded";  READ KEY -> VALUE or "none";
//     RUN -> "ran N" (N: the keys it holds)
// It writes "MGMT_PORT DATA_PORT" to --port_file once both are bound, and runs until killed.
#include <arpa/inet.h>
#include <gflags/gflags.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "common/base/clock.h"
#include "common/daemon/program_flags.h"

DEFINE_string(address, "127.0.0.1", "the board's address (a loopback address of its own)");
DEFINE_string(port_file, "", "where to write \"MGMT_PORT DATA_PORT\" once bound");
DEFINE_int32(boot_ms, 200, "how long a boot takes");
DEFINE_string(serial, "emu-0", "the board's serial number (HEALTH says it)");

namespace {

int Bind(const std::string& address, uint16_t* port) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  if (fd < 0 || inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1 ||
      bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::perror(("snn-board-emu: binding " + address).c_str());
    std::exit(1);
  }
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}

class Board {
 public:
  std::string Manage(const std::string& line) {
    std::istringstream in(line);
    std::string verb, arg;
    in >> verb >> arg;
    Settle();
    if (verb == "STATUS") return Status();
    if (verb == "POWER" && (arg == "ON" || arg == "OFF")) {
      powered_ = arg == "ON";
      if (!powered_) Off();
      return Status();
    }
    if (verb == "BOOT") {
      powered_ = true;
      booted_ = false;
      memory_.clear();
      firmware_ = arg.empty() ? "default" : arg;
      boot_done_ = snn::MonotonicNow() + std::chrono::milliseconds(FLAGS_boot_ms);
      booting_ = true;
      return "booting";
    }
    if (verb == "RESET") {
      memory_.clear();
      return "reset";
    }
    if (verb == "HEALTH") {
      if (!fault_.empty()) return "fail " + fault_;
      if (!powered_) return "fail powered off";
      if (!booted_) return "fail not booted";
      return "ok serial " + FLAGS_serial + ", firmware " + firmware_ + ", memory " +
             std::to_string(memory_.size()) + " keys";
    }
    if (verb == "FAULT") {
      std::string reason;
      std::getline(in, reason);
      fault_ = arg == "none" ? "" : arg + reason;
      return "fault set";
    }
    if (verb == "STATS") {
      return "packets_in=" + std::to_string(packets_in_) +
             " packets_out=" + std::to_string(packets_out_);
    }
    return "error unknown command";
  }

  // The SDK's side; an empty answer: none (a board that is not running says nothing).
  std::string Data(const std::string& line) {
    Settle();
    ++packets_in_;  // whatever arrives, answered or not
    if (!booted_) return "";
    std::istringstream in(line);
    std::string verb, key, value;
    in >> verb >> key;
    std::getline(in, value);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    std::string out;
    if (verb == "PING") {
      out = "PONG";
    } else if (verb == "ECHO") {
      out = line.size() > 5 ? line.substr(5) : "";
    } else if (verb == "LOAD") {
      memory_[key] = value;
      out = "loaded";
    } else if (verb == "READ") {
      auto it = memory_.find(key);
      out = it == memory_.end() ? "none" : it->second;
    } else if (verb == "RUN") {
      out = "ran " + std::to_string(memory_.size());
    } else {
      out = "error unknown command";
    }
    ++packets_out_;
    return out;
  }

 private:
  void Settle() {
    if (booting_ && snn::MonotonicNow() >= boot_done_) {
      booting_ = false;
      booted_ = powered_;
      boot_ms_ = FLAGS_boot_ms;
    }
  }
  void Off() {
    booted_ = booting_ = false;
    firmware_.clear();
    memory_.clear();
  }
  std::string Status() const {
    return std::string("power=") + (powered_ ? "on" : "off") + " booted=" + (booted_ ? "1" : "0") +
           " firmware=" + (booted_ ? firmware_ : "") + " boot_ms=" + std::to_string(boot_ms_);
  }

  bool powered_ = false, booted_ = false, booting_ = false;
  snn::MonotonicTime boot_done_;
  int64_t boot_ms_ = 0;
  std::string firmware_, fault_;
  std::map<std::string, std::string> memory_;
  uint64_t packets_in_ = 0, packets_out_ = 0;
};

void Serve(int fd, Board& board, bool management) {
  char buf[65536];
  sockaddr_in from{};
  socklen_t len = sizeof from;
  const ssize_t n = recvfrom(fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
  if (n <= 0) return;
  std::string line(buf, static_cast<size_t>(n));
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  const std::string out = management ? board.Manage(line) : board.Data(line);
  if (!out.empty()) sendto(fd, out.data(), out.size(), 0, reinterpret_cast<sockaddr*>(&from), len);
}

}  // namespace

int main(int argc, char** argv) {
  snn::ParseProgramFlags(&argc, &argv,
                         "snn-board-emu --address=127.0.0.5 --port_file=FILE [--boot_ms=200]");
  uint16_t mgmt_port = 0, data_port = 0;
  const int mgmt = Bind(FLAGS_address, &mgmt_port);
  const int data = Bind(FLAGS_address, &data_port);
  if (!FLAGS_port_file.empty()) {
    const std::string tmp = FLAGS_port_file + ".tmp";
    std::ofstream(tmp) << mgmt_port << " " << data_port << "\n";
    std::filesystem::rename(tmp, FLAGS_port_file);
  }
  Board board;
  for (;;) {
    pollfd fds[2] = {{mgmt, POLLIN, 0}, {data, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;
    if (fds[0].revents & POLLIN) Serve(mgmt, board, true);
    if (fds[1].revents & POLLIN) Serve(data, board, false);
  }
}
