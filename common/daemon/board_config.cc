#include "common/daemon/board_config.h"

#include <yaml-cpp/yaml.h>

#include <set>

#include "common/base/board_constraint.h"
#include "common/base/file_util.h"
#include "common/daemon/yaml_fields.h"

namespace snn {
namespace {

Result<uint32_t> ReadUint(const YAML::Node& node, const std::string& where, uint32_t lo,
                          uint32_t hi) {
  auto v = ReadWholeNumber(node, where, lo, hi);
  if (!v.ok()) return v.status();
  return static_cast<uint32_t>(*v);
}

Status ParseMesh(const std::string& text, const std::string& where, v1::BoardInfo& board) {
  unsigned w = 0, h = 0;
  char x = 0, extra = 0;
  if (sscanf(text.c_str(), "%u%c%u%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X') ||
      w < 1 || h < 1 || w > 256 || h > 256) {
    return InvalidArgument(where + " is '" + text + "'; write WxH with sides from 1 to 256");
  }
  board.set_width(w);
  board.set_height(h);
  return Status::Ok();
}

// "x,y" inside the board's mesh.
Result<v1::CoreXY> ParseCore(const YAML::Node& node, const std::string& where,
                             const v1::BoardInfo& board) {
  unsigned x = 0, y = 0;
  char comma = 0, extra = 0;
  const std::string text = node.IsScalar() ? node.as<std::string>() : "";
  if (sscanf(text.c_str(), "%u%c%u%c", &x, &comma, &y, &extra) != 3 || comma != ',' ||
      x >= board.width() || y >= board.height()) {
    return InvalidArgument(where + " '" + text + "' is not \"x,y\" inside the mesh");
  }
  v1::CoreXY c;
  c.set_x(x);
  c.set_y(y);
  return c;
}

// attributes: {rev: 3, firmware: "2.4"}: what jobs' constraints compare (a driver's own
// attributes of the same name take their place).
Status ParseAttributes(const YAML::Node& node, const std::string& where, v1::BoardInfo& board) {
  if (!node.IsMap()) return InvalidArgument(where + " must map names to values");
  if (node.size() > kMaxBoardAttributes) {
    return InvalidArgument(where + " has more than " + std::to_string(kMaxBoardAttributes) +
                           " entries");
  }
  for (const auto& kv : node) {
    const std::string name = kv.first.IsScalar() ? kv.first.as<std::string>() : "";
    if (Status s = CheckBoardAttribute(
            name, kv.second.IsScalar() ? kv.second.as<std::string>() : std::string("\n"));
        !s.ok()) {
      return InvalidArgument(where + ": " + s.message());
    }
    (*board.mutable_attributes())[name] = kv.second.as<std::string>();
  }
  return Status::Ok();
}

Result<v1::BoardInfo> ParseBoard(const YAML::Node& node, size_t index) {
  const std::string where = "boards[" + std::to_string(index) + "]";
  SNN_RETURN_IF_ERROR(
      CheckKnownFields(node, where,
                       {"type", "mesh", "neurons_per_core", "ksps", "streams", "dead_cores",
                        "health", "io_port", "driver", "board", "devices", "attributes"}));
  for (const char* required : {"type", "mesh", "ksps", "streams"}) {
    if (!node[required]) return InvalidArgument(where + " needs '" + required + "'");
  }
  v1::BoardInfo board;
  board.set_index(static_cast<uint32_t>(index));
  board.set_type(node["type"].as<std::string>());
  SNN_RETURN_IF_ERROR(ParseMesh(node["mesh"].as<std::string>(), where + ".mesh", board));
  auto npc = node["neurons_per_core"]
                 ? ReadUint(node["neurons_per_core"], where + ".neurons_per_core", 1, 65536)
                 : Result<uint32_t>(256u);
  if (!npc.ok()) return npc.status();
  board.set_neurons_per_core(*npc);
  auto ksps = ReadUint(node["ksps"], where + ".ksps", 1, 1'000'000'000);
  if (!ksps.ok()) return ksps.status();
  board.set_ksps(*ksps);
  auto streams = ReadUint(node["streams"], where + ".streams", 1, 4096);
  if (!streams.ok()) return streams.status();
  board.set_streams(*streams);
  auto health =
      node["health"] ? ReadUint(node["health"], where + ".health", 0, 100) : Result<uint32_t>(100u);
  if (!health.ok()) return health.status();
  board.set_health(*health);
  if (const YAML::Node dead = node["dead_cores"]) {
    if (!dead.IsSequence()) return InvalidArgument(where + ".dead_cores must be a list of \"x,y\"");
    for (const auto& item : dead) {
      auto c = ParseCore(item, where + ".dead_cores entry", board);
      if (!c.ok()) return c.status();
      *board.add_dead_cores() = *c;
    }
  }
  if (node["io_port"]) {
    auto port = ParseCore(node["io_port"], where + ".io_port", board);
    if (!port.ok()) return port.status();
    for (const auto& d : board.dead_cores()) {
      if (d.x() == port->x() && d.y() == port->y()) {
        return InvalidArgument(where + ".io_port is a dead core");
      }
    }
    *board.mutable_io_port() = *port;
  } else {
    // The I/O port defaults to (0,0): a dead core there would cut every task on the board off
    // from the host, silently. Refuse, and say how to fix it.
    for (const auto& d : board.dead_cores()) {
      if (d.x() == 0 && d.y() == 0) {
        return InvalidArgument(where +
                               ": core 0,0 is dead, and it is the board's I/O port unless io_port "
                               "names another; set io_port to a live core (e.g. io_port: \"" +
                               std::to_string(board.width() - 1) + ",0\")");
      }
    }
  }
  if (const YAML::Node attributes = node["attributes"]) {
    SNN_RETURN_IF_ERROR(ParseAttributes(attributes, where + ".attributes", board));
  }
  return board;
}

Result<BoardRuntime> ParseRuntime(const YAML::Node& node, const std::string& where) {
  if (!node.IsMap()) return InvalidArgument(where + " must be a map with env and library_paths");
  SNN_RETURN_IF_ERROR(CheckKnownFields(node, where, {"env", "library_paths"}));
  BoardRuntime runtime;
  if (const YAML::Node env = node["env"]) {
    if (!env.IsMap()) return InvalidArgument(where + ".env must map names to values");
    for (const auto& kv : env) {
      const std::string name = kv.first.as<std::string>();
      if (name.empty() || name.find('=') != std::string::npos || name.rfind("SNN_", 0) == 0) {
        return InvalidArgument(where + ".env: '" + name +
                               "' is not allowed (empty, has '=', or a reserved SNN_ name)");
      }
      auto value = ReadString(kv.second, where + ".env." + name);
      if (!value.ok()) return value.status();
      runtime.env[name] = *value;
    }
  }
  if (const YAML::Node paths = node["library_paths"]) {
    if (!paths.IsSequence()) return InvalidArgument(where + ".library_paths must be a list");
    for (const auto& item : paths) {
      auto path = ReadString(item, where + ".library_paths entry");
      if (!path.ok()) return path.status();
      if (path->empty() || (*path)[0] != '/' || path->find(':') != std::string::npos) {
        return InvalidArgument(where + ".library_paths: '" + *path +
                               "' must be an absolute directory without ':'");
      }
      runtime.library_paths.push_back(*path);
    }
  }
  return runtime;
}

// {from: BOARD, to: BOARD | "NODE/BOARD", gbps: N, latency_us: N}
Result<v1::BoardLink> ParseLink(const YAML::Node& node, const std::string& where, size_t boards) {
  SNN_RETURN_IF_ERROR(CheckKnownFields(node, where, {"from", "to", "gbps", "latency_us"}));
  if (!node["from"] || !node["to"]) return InvalidArgument(where + " needs from and to");
  v1::BoardLink link;
  auto from = ReadWholeNumber(node["from"], where + ".from", 0, static_cast<int64_t>(boards) - 1);
  if (!from.ok()) return from.status();
  link.set_board(static_cast<uint32_t>(*from));
  const std::string to = node["to"].IsScalar() ? node["to"].as<std::string>() : "";
  const size_t slash = to.rfind('/');
  if (slash == std::string::npos) {  // a board of this node
    auto index = ReadWholeNumber(node["to"], where + ".to", 0, static_cast<int64_t>(boards) - 1);
    if (!index.ok()) return index.status();
    if (static_cast<uint32_t>(*index) == link.board()) {
      return InvalidArgument(where + " links board " + std::to_string(*index) + " to itself");
    }
    link.set_to_board(static_cast<uint32_t>(*index));
  } else {
    const std::string index = to.substr(slash + 1);
    if (slash == 0 || index.empty() || index.size() > 5 ||
        index.find_first_not_of("0123456789") != std::string::npos) {
      return InvalidArgument(where + ".to is '" + to +
                             "'; give a board of this node (1) or NODE/BOARD (node2/0)");
    }
    link.set_to_node(to.substr(0, slash));
    link.set_to_board(static_cast<uint32_t>(std::stoul(index)));
  }
  if (node["gbps"]) {
    auto gbps = ReadNumber(node["gbps"], where + ".gbps", 0, 1e6);
    if (!gbps.ok()) return gbps.status();
    link.set_gbps(*gbps);
  }
  if (node["latency_us"]) {
    auto latency = ReadNumber(node["latency_us"], where + ".latency_us", 0, 1e9);
    if (!latency.ok()) return latency.status();
    link.set_latency_us(*latency);
  }
  return link;
}

}  // namespace

Result<BoardsFile> ParseBoardsYaml(const std::string& text) {
  BoardsFile file;
  try {
    auto loaded = LoadYamlDocument(text, "the boards file");
    if (!loaded.ok()) return loaded.status();
    YAML::Node root = *loaded;
    SNN_RETURN_IF_ERROR(CheckKnownFields(
        root, "the boards file", {"backend", "boards", "runtimes", "switch", "links", "drivers"}));
    if (root["backend"]) file.backend = root["backend"].as<std::string>();
    if (file.backend != "sim") {
      return InvalidArgument("backend '" + file.backend + "' is not available (known: sim)");
    }
    const YAML::Node boards = root["boards"];
    if (!boards || !boards.IsSequence() || boards.size() == 0) {
      return InvalidArgument("boards file needs a non-empty 'boards:' list");
    }
    if (root["drivers"]) {
      auto drivers = ParseBoardDrivers(root["drivers"]);
      if (!drivers.ok()) return drivers.status();
      file.drivers = std::move(drivers).value();
    }
    for (size_t i = 0; i < boards.size(); ++i) {
      auto board = ParseBoard(boards[i], i);
      if (!board.ok()) return board.status();
      auto ref = ParseBoardDriverRef(boards[i], "boards[" + std::to_string(i) + "]", file.drivers);
      if (!ref.ok()) return ref.status();
      for (const auto& other : file.board_drivers) {
        if (!ref->driver.empty() && other.driver == ref->driver && other.board == ref->board) {
          return InvalidArgument("boards[" + std::to_string(i) + "]: board " + ref->board +
                                 " of driver " + ref->driver + " is listed twice");
        }
      }
      board->set_pass_through(!ref->driver.empty());  // drivers run boards pass-through
      file.boards.push_back(std::move(board).value());
      file.board_drivers.push_back(std::move(ref).value());
    }
    if (root["switch"]) {
      auto name = ReadString(root["switch"], "switch");
      if (!name.ok()) return name.status();
      file.switch_name = *name;
    }
    if (const YAML::Node links = root["links"]) {
      if (!links.IsSequence()) return InvalidArgument("links must be a list of {from, to, ...}");
      for (size_t i = 0; i < links.size(); ++i) {
        auto link = ParseLink(links[i], "links[" + std::to_string(i) + "]", file.boards.size());
        if (!link.ok()) return link.status();
        file.links.push_back(std::move(link).value());
      }
    }
    if (const YAML::Node runtimes = root["runtimes"]) {
      if (!runtimes.IsMap()) return InvalidArgument("runtimes must map board types to a setup");
      for (const auto& kv : runtimes) {
        const std::string type = kv.first.as<std::string>();
        auto runtime = ParseRuntime(kv.second, "runtimes." + type);
        if (!runtime.ok()) return runtime.status();
        file.runtimes[type] = std::move(runtime).value();
      }
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument("boards file is not valid YAML: " + std::string(e.what()));
  }
  return file;
}

Result<BoardsFile> LoadBoardsFile(const std::string& path) {
  auto text = ReadWholeFile(path, "the boards file");
  if (!text.ok()) return text.status();
  auto file = ParseBoardsYaml(*text);
  if (!file.ok()) return Status(file.status().code(), path + ": " + file.status().message());
  return file;
}

}  // namespace snn
