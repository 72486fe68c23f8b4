// The network a task on pass-through boards sees: a namespace of its own in which only its
// boards' endpoints answer. The shepherd builds it before it forks the command: a new network
// namespace with its loopback up and each endpoint's address on it, and a UDP socket bound at
// each endpoint there. It then goes back to the host's namespace (the command, forked in
// between, stays in the new one) and relays each datagram between the task's sockets and the
// board, with one host socket per task socket so that answers find their way back.
//
// Nothing else leaves the namespace: other boards, another tenant's board and every board's
// management port are unreachable from the task, and the relay ends with the shepherd, so a
// process left over from the task reaches nothing either. The relay carries UDP, which every
// Ethernet-attached board we know of speaks (SpiNNaker's SCAMP, BrainScaleS-2's HostARQ);
// another protocol is refused rather than let through unisolated.
#pragma once

#include <netinet/in.h>
#include <poll.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/base/status.h"

namespace snn {

// "udp://A.B.C.D:PORT" or "A.B.C.D:PORT" (an IPv4 address, as drivers give them).
Result<sockaddr_in> ParseRelayEndpoint(const std::string& endpoint);

class BoardRelay {
 public:
  // A task's sockets talking to one endpoint at a time; one more retires the longest idle.
  static constexpr size_t kMaxPeersPerEndpoint = 64;

  BoardRelay(const BoardRelay&) = delete;
  BoardRelay& operator=(const BoardRelay&) = delete;
  ~BoardRelay();

  // Moves the calling (single-threaded) process into a new network namespace and binds the
  // task's side of each endpoint there. Children forked from now on share the namespace.
  static Result<std::unique_ptr<BoardRelay>> Isolate(const std::vector<std::string>& endpoints);

  // Back to the host's network namespace, where the relay reaches the boards.
  Status ReturnToHost();

  // Adds the sockets to wait on to `fds`; after poll, Relay forwards what they hold.
  void Watch(std::vector<pollfd>* fds) const;
  void Relay(const std::vector<pollfd>& fds);

 private:
  struct Peer {
    sockaddr_in task_side{};
    int host_fd = -1;  // connected to the board
    uint64_t last_used = 0;
  };
  struct Endpoint {
    sockaddr_in board{};
    int task_fd = -1;  // bound at the board's address, in the task's namespace
    std::vector<Peer> peers;
  };

  BoardRelay() = default;
  void FromTask(Endpoint& endpoint);
  void FromBoard(Endpoint& endpoint, Peer& peer);
  Peer* PeerFor(Endpoint& endpoint, const sockaddr_in& task_side);

  int host_ns_ = -1;
  std::vector<Endpoint> endpoints_;
  uint64_t tick_ = 0;
  std::vector<char> buffer_ = std::vector<char>(65536);
};

}  // namespace snn
