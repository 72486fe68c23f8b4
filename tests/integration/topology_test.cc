// Topology-aware gangs with real daemons. node1 has two 4x4 boards joined by a link and two
// 3x4 boards without one; node2, on another switch, has three more 4x4 boards. A gang of two
// 12-core replicas fits the 3x4 boards exactly (best fit alone would take them) and node2 has
// the most free room, yet packed (the default where topology is declared) it lands on the
// linked boards, and snnctl show prints the link. Spread, a gang lands on different switches.
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

v1::JobSpec Gang(const std::string& spread) {
  v1::JobSpec spec = ShellJob("sleep 600", 12);
  spec.set_min_replicas(2);
  spec.set_max_replicas(2);
  spec.set_spread(spread);
  return spec;
}

std::string Boards(const std::string& meshes, const std::string& extra) {
  std::string yaml = "boards:\n";
  for (size_t at = 0; at < meshes.size(); at += 4) {
    yaml += "  - {type: sim, mesh: " + meshes.substr(at, 3) +
            ", neurons_per_core: 256, ksps: 1000, streams: 4}\n";
  }
  return yaml + extra;
}

TEST(TopologyTest, APackedGangTakesLinkedBoardsOverRoomierUnlinkedOnes) {
  TestCluster cluster;
  cluster.StartMaster();
  cluster.StartAgent("node1", Boards("4x4 4x4 3x4 3x4",
                                     "switch: sw-a\nlinks:\n"
                                     "  - {from: 0, to: 1, gbps: 100, latency_us: 1}\n"));
  cluster.StartAgent("node2", Boards("4x4 4x4 4x4", "switch: sw-b\n"));
  ASSERT_TRUE(TestCluster::WaitUntil([&] { return cluster.NodesUp() == 2; }));

  ASSERT_TRUE(cluster.Submit(Gang("")).ok());  // packed: the default with topology declared
  ASSERT_TRUE(cluster.WaitForState(1, v1::RUNNING));
  auto job = cluster.Show(1);
  ASSERT_TRUE(job.ok());
  ASSERT_EQ(job->tasks_size(), 2);
  std::set<std::pair<std::string, uint32_t>> boards;
  for (const auto& t : job->tasks()) boards.emplace(t.node(), t.board());
  EXPECT_EQ(boards, (std::set<std::pair<std::string, uint32_t>>{{"node1", 0}, {"node1", 1}}))
      << cluster.Snnctl({"show", "1"}).out;
  const CliRun show = cluster.Snnctl({"show", "1"});
  EXPECT_NE(show.out.find("Gang:\n  task 0 (node1/"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("): linked (100 Gb/s, 1 us)\n"), std::string::npos) << show.out;

  // Spread: as far apart as the topology allows, another switch.
  ASSERT_TRUE(cluster.Submit(Gang("spread")).ok());
  ASSERT_TRUE(cluster.WaitForState(2, v1::RUNNING));
  auto spread = cluster.Show(2);
  ASSERT_TRUE(spread.ok());
  ASSERT_EQ(spread->tasks_size(), 2);
  EXPECT_NE(spread->tasks(0).node(), spread->tasks(1).node());
  EXPECT_NE(cluster.Snnctl({"show", "2"}).out.find("): elsewhere\n"), std::string::npos);

  // A job file says which it wants; anything else is refused with the choices.
  v1::JobSpec odd = Gang("scatter");
  auto refused = cluster.Submit(odd);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("use pack"), std::string::npos);
  for (const char* id : {"1", "2"}) cluster.Snnctl({"cancel", id});
}

}  // namespace
}  // namespace snn::testing
