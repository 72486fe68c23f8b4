#include "drivers/ether/ether_driver.h"

#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "drivers/ether/udp_exchange.h"

namespace snn {
namespace {

Result<HostPort> Endpoint(const YAML::Node& board, const std::string& field, size_t index) {
  const std::string where = "board " + std::to_string(index + 1) + ": " + field;
  if (!board[field] || !board[field].IsScalar()) return InvalidArgument(where + " is missing");
  auto address = ParseHostPort(board[field].as<std::string>());
  if (!address.ok()) return InvalidArgument(where + ": " + address.status().message());
  return address;
}

// "power=on booted=1 firmware=F boot_ms=N" -> its fields.
std::map<std::string, std::string> Fields(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string word;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

}  // namespace

Result<std::vector<EtherBoardConfig>> LoadEtherBoards(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ": " + e.msg);
  }
  if (!root["boards"] || !root["boards"].IsSequence() || root["boards"].size() == 0) {
    return InvalidArgument(path + ": no boards (a list under `boards:`)");
  }
  std::vector<EtherBoardConfig> boards;
  for (size_t i = 0; i < root["boards"].size(); ++i) {
    const YAML::Node b = root["boards"][i];
    EtherBoardConfig c;
    if (!b["id"] || !b["id"].IsScalar() || b["id"].as<std::string>().empty()) {
      return InvalidArgument(path + ": board " + std::to_string(i + 1) + ": id is missing");
    }
    c.id = b["id"].as<std::string>();
    for (const auto& other : boards) {
      if (other.id == c.id) return InvalidArgument(path + ": board id " + c.id + " twice");
    }
    auto management = Endpoint(b, "management", i);
    if (!management.ok()) return InvalidArgument(path + ": " + management.status().message());
    auto data = Endpoint(b, "data", i);
    if (!data.ok()) return InvalidArgument(path + ": " + data.status().message());
    c.management = *management;
    c.data = *data;
    if (b["firmware"]) c.firmware = b["firmware"].as<std::string>();
    if (b["attributes"] && b["attributes"].IsMap()) {
      for (const auto& kv : b["attributes"]) {
        c.attributes[kv.first.as<std::string>()] = kv.second.as<std::string>();
      }
    }
    if (b["devices"]) {
      if (!b["devices"].IsSequence()) {
        return InvalidArgument(path + ": board " + c.id + ": devices must be a list of paths");
      }
      for (const auto& d : b["devices"]) {
        const std::string device = d.IsScalar() ? d.as<std::string>() : "";
        if (device.empty() || device[0] != '/') {
          return InvalidArgument(path + ": board " + c.id + ": device '" + device +
                                 "' is not an absolute path");
        }
        c.devices.push_back(device);
      }
    }
    boards.push_back(std::move(c));
  }
  return boards;
}

namespace {

// The device node at `path` becomes uid's (and gid's), readable and writable by them only. A
// missing node (the board unplugged) is an error: the task could not use its board.
Status GiveDevice(const std::string& path, uint32_t uid, uint32_t gid) {
  if (chown(path.c_str(), uid, gid) != 0 || chmod(path.c_str(), 0600) != 0) {
    return FailedPrecondition("cannot give device " + path + " to uid " + std::to_string(uid) +
                              ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

EtherDriver::EtherDriver(std::vector<EtherBoardConfig> boards, const Clock& clock,
                         int64_t boot_timeout_ms, std::string board_type)
    : boards_(std::move(boards)),
      clock_(clock),
      boot_timeout_ms_(boot_timeout_ms),
      board_type_(std::move(board_type)) {}

v1::DriverHelloReply EtherDriver::Hello() {
  v1::DriverHelloReply hello;
  hello.set_protocol_version(kDriverProtocolVersion);
  hello.set_driver("snn-driver-ether 1");
  hello.set_board_type(board_type_);
  hello.set_pass_through(true);
  hello.set_enforces_budget(false);
  return hello;
}

Result<const EtherBoardConfig*> EtherDriver::Find(const std::string& board) const {
  for (const auto& b : boards_) {
    if (b.id == board) return &b;
  }
  return NotFound("no board " + board + " on this driver");
}

Result<v1::DriverBoardState> EtherDriver::State(const EtherBoardConfig& board) {
  auto status = UdpExchange(board.management, "STATUS");
  if (!status.ok()) return status.status();
  auto fields = Fields(*status);
  v1::DriverBoardState state;
  state.set_id(board.id);
  state.set_power(fields["power"] != "on"   ? v1::BOARD_OFF
                  : fields["booted"] == "1" ? v1::BOARD_BOOTED
                                            : v1::BOARD_ON);
  state.set_firmware(fields["firmware"]);
  state.set_boot_ms(std::atoll(fields["boot_ms"].c_str()));
  return state;
}

std::vector<v1::DriverBoard> EtherDriver::Discover() {
  std::vector<v1::DriverBoard> out;
  for (const auto& b : boards_) {
    v1::DriverBoard d;
    auto state = State(b);
    if (state.ok()) {
      *d.mutable_state() = *state;
    } else {  // a board whose management port does not answer is reported, and unusable
      d.mutable_state()->set_id(b.id);
      d.mutable_state()->set_power(v1::BOARD_POWER_UNSPECIFIED);
    }
    for (const auto& [k, v] : b.attributes) (*d.mutable_attributes())[k] = v;
    d.add_endpoints("udp://" + b.data.ToString());
    out.push_back(std::move(d));
  }
  return out;
}

Result<v1::DriverBoardState> EtherDriver::Power(const std::string& id, bool on) {
  auto board = Find(id);
  if (!board.ok()) return board.status();
  auto answer = UdpExchange((*board)->management, on ? "POWER ON" : "POWER OFF");
  if (!answer.ok()) return answer.status();
  return State(**board);
}

Result<v1::DriverBoardState> EtherDriver::Boot(const std::string& id, const std::string& firmware) {
  auto board = Find(id);
  if (!board.ok()) return board.status();
  const std::string image = firmware.empty() ? (*board)->firmware : firmware;
  auto answer = UdpExchange((*board)->management, "BOOT " + image);
  if (!answer.ok()) return answer.status();
  const int64_t deadline = clock_.MonotonicMs() + boot_timeout_ms_;
  for (;;) {
    auto state = State(**board);
    if (!state.ok()) return state.status();
    if (state->power() == v1::BOARD_BOOTED) return state;
    if (clock_.MonotonicMs() >= deadline) {
      return DeadlineExceeded("board " + id + " did not finish booting " + image + " within " +
                              std::to_string(boot_timeout_ms_ / 1000) + " s");
    }
    clock_.SleepMs(20);
  }
}

Result<v1::DriverBoardState> EtherDriver::Reset(const std::string& id) {
  auto board = Find(id);
  if (!board.ok()) return board.status();
  auto answer = UdpExchange((*board)->management, "RESET");
  if (!answer.ok()) return answer.status();
  if (*answer != "reset") return Internal("board " + id + " answered the reset with: " + *answer);
  return State(**board);
}

Result<v1::DriverHealthReply> EtherDriver::HealthCheck(const std::string& id) {
  auto board = Find(id);
  if (!board.ok()) return board.status();
  v1::DriverHealthReply reply;
  auto answer = UdpExchange((*board)->management, "HEALTH");
  if (!answer.ok()) {
    reply.set_output("the management port does not answer: " + answer.status().message());
    return reply;
  }
  if (answer->rfind("ok", 0) != 0) {
    reply.set_output(answer->rfind("fail ", 0) == 0 ? answer->substr(5) : *answer);
    return reply;
  }
  // The data path too: what the task's SDK will use.
  auto pong = UdpExchange((*board)->data, "PING");
  if (!pong.ok() || *pong != "PONG") {
    reply.set_output("the data port does not answer PING");
    return reply;
  }
  reply.set_healthy(true);
  reply.set_output(answer->substr(answer->size() > 3 ? 3 : answer->size()));
  return reply;
}

Result<v1::DriverReservation> EtherDriver::Reserve(const std::string& id,
                                                   const v1::DriverReserve& request) {
  auto board = Find(id);
  if (!board.ok()) return board.status();
  if (auto it = reserved_by_.find(id); it != reserved_by_.end() && it->second != request.task()) {
    return FailedPrecondition("board " + id + " is reserved by " + it->second);
  }
  auto state = State(**board);
  if (!state.ok()) return state.status();
  if (state->power() != v1::BOARD_BOOTED) {
    return FailedPrecondition("board " + id + " is not booted");
  }
  v1::DriverReservation r;
  for (const std::string& device : (*board)->devices) {
    SNN_RETURN_IF_ERROR(GiveDevice(device, request.uid(), request.gid()));
    r.add_devices(device);
  }
  reserved_by_[id] = request.task();
  (*r.mutable_env())["SNN_BOARD_ENDPOINTS"] = "udp://" + (*board)->data.ToString();
  r.add_endpoints((*board)->data.ToString());
  return r;
}

Result<v1::DriverBoardState> EtherDriver::Release(const std::string& id,
                                                  const v1::DriverRelease& request) {
  auto board = Find(id);
  if (!board.ok()) return board.status();
  reserved_by_.erase(id);
  for (const std::string& device : (*board)->devices) {
    SNN_RETURN_IF_ERROR(GiveDevice(device, 0, 0));
  }
  return Reset(id);  // the next tenant finds nothing of this one
}

Result<v1::DriverStatsReply> EtherDriver::Stats(const std::string& id) {
  auto board = Find(id);
  if (!board.ok()) return board.status();
  auto answer = UdpExchange((*board)->management, "STATS");
  if (!answer.ok()) return answer.status();
  v1::DriverStatsReply stats;
  for (const auto& [k, v] : Fields(*answer)) {
    (*stats.mutable_counters())[k] = std::strtoull(v.c_str(), nullptr, 10);
  }
  return stats;
}

}  // namespace snn
