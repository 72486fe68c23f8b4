// The spike gateway: a Unix socket (SNN_GATEWAY) where tasks inject spikes, advance their
// network and read its output, in the binary protocol of client/spike_wire.h. A connection
// belongs to the task whose token it presents first. Over budget, an inject waits in the
// gateway (or, with kNoWait, is answered kThrottled with the time to wait); the batch passes
// whole, in order. A malformed request closes only its own connection.
// Thread contract: the gateway serves on a thread of its own; AddTask, RemoveTask, Find and
// Usage are safe from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/base/clock.h"
#include "common/base/status.h"
#include "common/rpc/asio.h"
#include "nodeagent/spikes/spike_plane.h"

namespace snn {

class GatewaySession;

class SpikeGateway {
 public:
  SpikeGateway(const Clock& clock, std::string socket_path);
  ~SpikeGateway();

  // Binds the socket (replacing a stale one) and starts serving.
  Status Start();
  void Stop();

  std::shared_ptr<TaskSpikePlane> AddTask(SpikePlaneConfig config,
                                          std::unique_ptr<SpikeNetwork> network);
  // Closes the task's plane: its connections get errors from now on.
  void RemoveTask(const TaskKey& key);
  std::shared_ptr<TaskSpikePlane> Find(const TaskKey& key) const;
  std::shared_ptr<TaskSpikePlane> FindByToken(const std::string& token) const;

  const std::string& socket_path() const { return socket_path_; }
  const Clock& clock() const { return clock_; }

 private:
  friend class GatewaySession;
  void Accept();
  void Forget(const std::shared_ptr<GatewaySession>& session);

  const Clock& clock_;
  const std::string socket_path_;
  mutable std::mutex mu_;
  std::map<TaskKey, std::shared_ptr<TaskSpikePlane>> planes_;

  asio::io_context io_;
  asio::local::stream_protocol::acceptor acceptor_;
  std::set<std::shared_ptr<GatewaySession>> sessions_;  // gateway thread only
  std::thread thread_;
};

}  // namespace snn
