// The process behind `snnctl connection start`: it listens on a Unix socket of its user's
// (cli/shared_connection.h says where) and carries each snnctl command's frames to the master
// over TLS connections it keeps open, so that a command pays for neither OpenSSL's start nor a
// handshake (as ssh's ControlMaster spares each ssh its key exchange).
// - Only a process of the relay's own user is served (SO_PEERCRED on every accepted socket);
//   the directory is the user's alone too.
// - It forwards requests as they come, with the credential the command minted (MUNGE, per
//   process as without the relay): it adds no identity of its own, and the master still decodes
//   and checks every command's credential.
// - Each command connected has an upstream connection to itself, taken from a pool (a pooled one
//   the master closed meanwhile is dropped, not used) and given back when the command ends;
//   upstreams follow the leader of an HA group as any client does.
// - Two requests of its own, never forwarded: the status line and stop.
// - It ends after `idle_ms` with no command connected, on stop, or on SIGTERM; it removes its
//   socket as it goes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/base/clock.h"
#include "common/base/status.h"
#include "common/rpc/rpc_client.h"

namespace snn {

inline constexpr char kRelayStatusMethod[] = "snnctl.connection.status";
inline constexpr char kRelayStopMethod[] = "snnctl.connection.stop";

struct RelayConfig {
  std::string socket_path;
  std::string master;  // as given, for the status line
  int64_t idle_ms = 600000;
  size_t max_clients = 128;  // commands connected at once (under the master's 256 per user)
  // A new connection to the master (TLS, connected to the leader).
  std::function<Result<std::unique_ptr<RpcClient>>()> connect;
};

// Serves on `listen_fd` (bound and listening on config.socket_path) until idle or stopped;
// removes the socket before it returns.
void RunConnectionRelay(const RelayConfig& config, int listen_fd, const Clock& clock);

}  // namespace snn
