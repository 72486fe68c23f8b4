// snnctl's shared connection (`snnctl connection start|status|stop`): a relay of the user's own
// (cli/connection_relay.h) that keeps connections to the master open, so that each later snnctl
// command of that user, for that master and CA, skips TLS's start-up and handshake. Workflow
// tools that run one snnctl per job (as they run sbatch) gain most.
// Where: $XDG_RUNTIME_DIR/snnctl/ when that is set, else /tmp/snnctl-UID/; the directory must be
// the user's own and closed to others (mode 0700), or nothing is shared. One socket per master
// list and CA file. A command uses the relay when one answers there and falls back to its own
// connection silently otherwise.
#pragma once

#include <ostream>
#include <string>

#include "cli/cli_options.h"
#include "common/base/status.h"
#include "common/rpc/rpc_client.h"

namespace snn {

// The socket of the relay for `o`'s master and CA file; with `create`, the directory is made if
// missing. An error when the directory is not a private one of this user's.
Result<std::string> SharedConnectionSocket(const CliOptions& o, bool create);

// Connects `client` to the relay for `o` when one answers there; false (and nothing changed)
// otherwise.
bool UseSharedConnection(const CliOptions& o, RpcClient& client);

int ConnectionStart(const CliOptions& o, std::ostream& out, std::ostream& err);
int ConnectionStatus(const CliOptions& o, std::ostream& out, std::ostream& err);
int ConnectionStop(const CliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace snn
