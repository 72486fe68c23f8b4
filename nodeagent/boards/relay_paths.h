// Relay paths through a board's mesh: how configuration reaches a core from the board's I/O
// port and how the core's spikes get back. Dimension-order routing (X then Y); a route that
// would cross a dead core tries Y then X, then the shortest detour. Routers of busy cores relay
// for everyone; only dead cores block. Pure; thread-safe.
#pragma once

#include <vector>

#include "common/base/core_grid.h"
#include "proto/job.pb.h"

namespace snn {

// The waypoints (endpoints and turns) of a route from `from` to `to`, X first; empty if every
// route is blocked by dead cores.
std::vector<v1::CoreXY> RouteAround(const CoreGrid& grid, const v1::CoreXY& from,
                                    const v1::CoreXY& to);

// Both paths of one core: configuration from the port, spikes back to it.
v1::RelayPath RelayPathFor(const CoreGrid& grid, const v1::CoreXY& io_port, const v1::CoreXY& core);

}  // namespace snn
