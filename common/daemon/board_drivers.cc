#include "common/daemon/board_drivers.h"

#include <regex>

namespace snn {
namespace {

bool EnvName(const std::string& name) {
  static const std::regex kName("[A-Za-z_][A-Za-z0-9_]*");
  return std::regex_match(name, kName);
}

// "udp://127.0.0.5:4000" -> "127.0.0.5"; "[::1]:4000" -> "::1".
std::string HostOf(std::string endpoint) {
  if (auto scheme = endpoint.find("://"); scheme != std::string::npos) {
    endpoint = endpoint.substr(scheme + 3);
  }
  if (!endpoint.empty() && endpoint[0] == '[') return endpoint.substr(1, endpoint.find(']') - 1);
  return endpoint.substr(0, endpoint.rfind(':'));
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

}  // namespace

Result<std::map<std::string, BoardDriverConfig>> ParseBoardDrivers(const YAML::Node& node) {
  std::map<std::string, BoardDriverConfig> drivers;
  if (!node.IsMap()) return InvalidArgument("drivers must map names to {command, aliases}");
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    const std::string where = "drivers." + name;
    const YAML::Node d = kv.second;
    if (!d.IsMap()) return InvalidArgument(where + " must be a map with command and aliases");
    for (const auto& field : d) {
      const std::string f = field.first.as<std::string>();
      if (f != "command" && f != "aliases") {
        return InvalidArgument(where + " has an unknown field '" + f +
                               "' (known: command, aliases)");
      }
    }
    BoardDriverConfig config;
    if (!d["command"] || !d["command"].IsSequence() || d["command"].size() == 0) {
      return InvalidArgument(where + ".command must be a list: the driver binary, then its flags");
    }
    for (const auto& arg : d["command"]) config.command.push_back(arg.as<std::string>());
    if (config.command[0].empty() || config.command[0][0] != '/') {
      return InvalidArgument(where + ".command must start with the driver's absolute path");
    }
    if (const YAML::Node aliases = d["aliases"]) {
      if (!aliases.IsMap())
        return InvalidArgument(where + ".aliases must map names to hosts|endpoints");
      for (const auto& a : aliases) {
        const std::string var = a.first.as<std::string>();
        const std::string what = a.second.as<std::string>();
        if (!EnvName(var))
          return InvalidArgument(where + ".aliases: '" + var + "' is not a variable name");
        if (what != "hosts" && what != "endpoints") {
          return InvalidArgument(where + ".aliases." + var + " must be hosts or endpoints, not '" +
                                 what + "'");
        }
        config.aliases[var] = what;
      }
    }
    drivers[name] = std::move(config);
  }
  return drivers;
}

Result<BoardDriverRef> ParseBoardDriverRef(
    const YAML::Node& board, const std::string& where,
    const std::map<std::string, BoardDriverConfig>& drivers) {
  BoardDriverRef ref;
  if (!board["driver"] && !board["board"]) {
    if (board["devices"]) {
      return InvalidArgument(where + ".devices: only a board a driver runs has device nodes");
    }
    return ref;
  }
  if (!board["driver"] || !board["board"]) {
    return InvalidArgument(where + " needs both 'driver' and 'board' (the driver's id of it)");
  }
  ref.driver = board["driver"].as<std::string>();
  ref.board = board["board"].as<std::string>();
  if (!drivers.count(ref.driver)) {
    return InvalidArgument(where + ".driver '" + ref.driver + "' is not under drivers:");
  }
  if (ref.board.empty()) return InvalidArgument(where + ".board is empty");
  if (const YAML::Node devices = board["devices"]) {
    if (!devices.IsSequence()) {
      return InvalidArgument(where + ".devices must be a list of device paths ([/dev/xylo-a])");
    }
    for (const auto& d : devices) {
      const std::string path = d.IsScalar() ? d.as<std::string>() : "";
      if (path.empty() || path[0] != '/' || path.find('\0') != std::string::npos) {
        return InvalidArgument(where + ".devices: '" + path + "' is not an absolute path");
      }
      ref.devices.push_back(path);
    }
  }
  return ref;
}

std::map<std::string, std::string> DriverAliasEnv(const BoardDriverConfig& driver,
                                                  const std::vector<std::string>& endpoints) {
  std::vector<std::string> hosts;
  for (const auto& e : endpoints) hosts.push_back(HostOf(e));
  std::map<std::string, std::string> env;
  for (const auto& [var, what] : driver.aliases) {
    env[var] = what == "hosts" ? Join(hosts) : Join(endpoints);
  }
  return env;
}

}  // namespace snn
