// The node's boards as the boards file lists them: simulated in the agent, or run by a driver
// process. Each board given to a driver must be one the driver discovers, and the driver must
// run its type pass-through (managed boards are simulated in the agent for now); a board that
// is not booted is booted, and every one is checked before the agent serves.
#pragma once

#include <memory>
#include <vector>

#include "common/daemon/board_config.h"
#include "nodeagent/drivers/driver_pool.h"
#include "nodeagent/hal/board.h"

namespace snn {

// `pool` may be null when the file names no driver. Blocking: agent start-up.
Result<std::vector<std::unique_ptr<Board>>> MakeBoards(const BoardsFile& file, DriverPool* pool,
                                                       uint64_t sim_memory_bytes);

}  // namespace snn
