#include "common/daemon/board_config.h"

#include <gtest/gtest.h>

namespace snn {
namespace {

TEST(BoardConfigTest, ParsesBoards) {
  auto file = ParseBoardsYaml(R"(
backend: sim
boards:
  - {type: sim-v1, mesh: 8x4, ksps: 2000, streams: 8, dead_cores: ["1,2", "7,3"]}
  - {type: sim-v2, mesh: 16x16, neurons_per_core: 1024, ksps: 8000, streams: 16, health: 80}
)");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->boards.size(), 2u);
  const auto& b0 = file->boards[0];
  EXPECT_EQ(b0.width(), 8u);
  EXPECT_EQ(b0.height(), 4u);
  EXPECT_EQ(b0.neurons_per_core(), 256u);
  ASSERT_EQ(b0.dead_cores_size(), 2);
  EXPECT_EQ(b0.dead_cores(1).x(), 7u);
  EXPECT_EQ(file->boards[1].index(), 1u);
  EXPECT_EQ(file->boards[1].health(), 80u);
}

TEST(BoardConfigTest, TopologyLinksAndSwitch) {
  const std::string boards =
      "boards:\n  - {type: a, mesh: 4x4, ksps: 10, streams: 1}\n"
      "  - {type: a, mesh: 4x4, ksps: 10, streams: 1}\n";
  auto file = ParseBoardsYaml(boards +
                              "switch: rack1\nlinks:\n  - {from: 0, to: 1, gbps: 100, "
                              "latency_us: 0.5}\n  - {from: 1, to: node7/3}\n");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->switch_name, "rack1");
  ASSERT_EQ(file->links.size(), 2u);
  EXPECT_EQ(file->links[0].to_node(), "");  // this node: filled in at registration
  EXPECT_EQ(file->links[0].to_board(), 1u);
  EXPECT_DOUBLE_EQ(file->links[0].gbps(), 100);
  EXPECT_DOUBLE_EQ(file->links[0].latency_us(), 0.5);
  EXPECT_EQ(file->links[1].to_node(), "node7");
  EXPECT_EQ(file->links[1].to_board(), 3u);
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {"links:\n  - {from: 0, to: 0}\n", "to itself"},
           {"links:\n  - {from: 2, to: 1}\n", "links[0].from"},
           {"links:\n  - {from: 0, to: 5}\n", "links[0].to"},
           {"links:\n  - {from: 0, to: /3}\n", "NODE/BOARD"},
           {"links:\n  - {from: 0, to: 1, gbps: -1}\n", "links[0].gbps"},
           {"links:\n  - {from: 0}\n", "needs from and to"},
           {"links: {from: 0}\n", "must be a list"}}) {
    auto refused = ParseBoardsYaml(boards + bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find(says), std::string::npos)
        << refused.status().message();
  }
}

// attributes: what jobs' constraints compare; names a constraint can write, values one line.
TEST(BoardConfigTest, AttributesForConstraints) {
  auto file = ParseBoardsYaml(
      "boards:\n  - {type: a, mesh: 4x4, ksps: 10, streams: 1, attributes: {rev: 3, firmware: "
      "\"2.10\", chip_id: A-7}}\n");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const auto& a = file->boards[0].attributes();
  EXPECT_EQ(a.at("rev"), "3");
  EXPECT_EQ(a.at("firmware"), "2.10");
  EXPECT_EQ(a.at("chip_id"), "A-7");
  auto bad = [](const std::string& attributes) {
    auto f = ParseBoardsYaml(
        "boards:\n  - {type: a, mesh: 4x4, ksps: 10, streams: 1, attributes: " + attributes +
        "}\n");
    return f.ok() ? std::string() : f.status().message();
  };
  EXPECT_EQ(bad("{type: x}"),
            "boards[0].attributes: attribute 'type' is built in (the board's type)");
  EXPECT_EQ(bad("{chip.rev: 3}"),
            "boards[0].attributes: attribute 'chip.rev': a name is 1 to 64 letters, digits, '_' "
            "or '-', starting with a letter or '_'");
  EXPECT_EQ(bad("{rev: [1, 2]}"),
            "boards[0].attributes: attribute 'rev': a value is at most 256 characters, none of "
            "them control characters");
  EXPECT_EQ(bad("[rev]"), "boards[0].attributes must map names to values");
}

TEST(BoardConfigTest, ADriverBoardListsItsDeviceNodes) {
  const std::string drivers = "drivers:\n  usb: {command: [/bin/true]}\n";
  auto file = ParseBoardsYaml(
      "boards:\n  - {type: xylo, mesh: 1x1, ksps: 10, streams: 1, driver: usb, board: a, "
      "devices: [/dev/xylo-a, /dev/serial/by-id/a]}\n" +
      drivers);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->board_drivers.size(), 1u);
  EXPECT_EQ(file->board_drivers[0].devices,
            (std::vector<std::string>{"/dev/xylo-a", "/dev/serial/by-id/a"}));
  for (const auto& [devices, error] : std::vector<std::pair<std::string, std::string>>{
           {"[dev/xylo-a]", "'dev/xylo-a' is not an absolute path"},
           {"/dev/xylo-a", "must be a list"},
           {"[[/dev/a]]", "is not an absolute path"}}) {
    auto bad = ParseBoardsYaml(
        "boards:\n  - {type: xylo, mesh: 1x1, ksps: 10, streams: 1, driver: usb, board: a, "
        "devices: " +
        devices + "}\n" + drivers);
    ASSERT_FALSE(bad.ok()) << devices;
    EXPECT_NE(bad.status().message().find(error), std::string::npos) << bad.status().message();
  }
  auto simulated = ParseBoardsYaml(
      "boards:\n  - {type: sim-v1, mesh: 1x1, ksps: 10, streams: 1, devices: [/dev/a]}\n");
  ASSERT_FALSE(simulated.ok());
  EXPECT_NE(simulated.status().message().find("only a board a driver runs"), std::string::npos)
      << simulated.status().message();
}

TEST(BoardConfigTest, RejectsBadBoardsWithTheFieldNamed) {
  struct Case {
    const char* yaml;
    const char* expect;
  } cases[] = {
      {"boards: []", "non-empty"},
      {"boards:\n  - {type: a, mesh: 0x4, ksps: 1, streams: 1}", "boards[0].mesh"},
      {"boards:\n  - {type: a, mesh: 300x4, ksps: 1, streams: 1}", "boards[0].mesh"},
      {"boards:\n  - {type: a, mesh: 4x4, ksps: 0, streams: 1}", "boards[0].ksps"},
      {"boards:\n  - {type: a, mesh: 4x4, ksps: 1}", "needs 'streams'"},
      {"boards:\n  - {type: a, mesh: 4x4, ksps: 1, streams: 1, dead_cores: [\"4,0\"]}",
       "dead_cores"},
      {"boards:\n  - {type: a, mesh: 4x4, ksps: 1, streams: 1, colour: red}", "unknown field"},
      // A dead core on the default I/O port would cut every task off (issue 34).
      {"boards:\n  - {type: a, mesh: 4x4, ksps: 1, streams: 1, dead_cores: [\"0,0\"]}",
       "core 0,0 is dead, and it is the board's I/O port unless io_port names another"},
      {"boards:\n  - {type: a, mesh: 4x4, ksps: 1, streams: 1, dead_cores: [\"1,1\"], "
       "io_port: \"1,1\"}",
       "io_port is a dead core"},
      {"backend: vendorx\nboards:\n  - {type: a, mesh: 4x4, ksps: 1, streams: 1}", "not available"},
      {"boards: [", "not valid YAML"},
  };
  for (const auto& c : cases) {
    auto file = ParseBoardsYaml(c.yaml);
    ASSERT_FALSE(file.ok()) << c.yaml;
    EXPECT_NE(file.status().message().find(c.expect), std::string::npos)
        << c.yaml << " -> " << file.status().message();
  }
}

}  // namespace
}  // namespace snn
