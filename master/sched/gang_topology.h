// Topology-aware gangs: a gang's replicas exchange spikes, so where they land matters. How
// close two boards are, in order: the same board, boards with a link between them (boards
// files' `links:`), the same node, the same switch (`switch:`), elsewhere. A packed gang (the
// default where the pool declares any topology, or `replicas: {spread: pack}`) is placed to make
// the sum of its replica pairs' distances least; a spread one (`spread: spread`) the greatest.
// The search tries a few first boards (anchors) and, from each, places the other replicas
// nearest-first (farthest-first), keeping the best whole gang: a gang lands on linked boards
// even where boards with more room, or a closer fit, are unlinked.
// Pure; thread-compatible.
#pragma once

#include <optional>
#include <string>

#include "master/sched/pool_boards.h"
#include "master/sched/scheduler_types.h"
#include "proto/node.pb.h"

namespace snn {

enum class Closeness {
  kSameBoard = 0,
  kLinked = 1,
  kSameNode = 2,
  kSameSwitch = 3,
  kElsewhere = 4
};

Closeness CloseOf(const BoardCapacity& a, size_t index_a, const BoardCapacity& b, size_t index_b);

// Places every replica, or none, as PlaceGang does, by topology. `spread`: far apart.
std::optional<Gang> PlaceGangByTopology(PoolBoards& boards, const SchedJob& job, const Holds* holds,
                                        const std::vector<char>* prefer_not, bool spread);

// For snnctl show: how close board (node_a, a) is to (node_b, b), from the nodes' records:
// "same board", "linked (100 Gb/s, 1 us)", "same node", "same switch sw1", "elsewhere".
std::string DescribeCloseness(const v1::NodeRecord& node_a, uint32_t a,
                              const v1::NodeRecord& node_b, uint32_t b);

}  // namespace snn
