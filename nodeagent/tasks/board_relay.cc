#include "nodeagent/tasks/board_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace snn {
namespace {

std::string Errno(const std::string& what) { return what + ": " + strerror(errno); }

// Brings the namespace's loopback up (a new namespace starts with it down).
Status LoopbackUp() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(Errno("socket"));
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  const bool up = ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 &&
                  (ifr.ifr_flags |= IFF_UP, ioctl(fd, SIOCSIFFLAGS, &ifr) == 0);
  const std::string why = up ? "" : Errno("cannot bring the loopback up");
  close(fd);
  return up ? Status::Ok() : Internal(why);
}

// Puts `address`/32 on the namespace's loopback (rtnetlink RTM_NEWADDR), so that the task's
// packets to a board outside 127.0.0.0/8 reach the relay's socket.
Status AddressOnLoopback(in_addr address) {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return Internal(Errno("netlink socket"));
  struct {
    nlmsghdr header;
    ifaddrmsg message;
    char attributes[64];
  } request{};
  request.header.nlmsg_type = RTM_NEWADDR;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK;
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(ifaddrmsg));
  request.message.ifa_family = AF_INET;
  request.message.ifa_prefixlen = 32;
  request.message.ifa_scope = RT_SCOPE_HOST;
  request.message.ifa_index = if_nametoindex("lo");
  for (const uint16_t type : {IFA_LOCAL, IFA_ADDRESS}) {
    auto* attribute = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(&request) +
                                                NLMSG_ALIGN(request.header.nlmsg_len));
    attribute->rta_type = type;
    attribute->rta_len = RTA_LENGTH(sizeof address);
    std::memcpy(RTA_DATA(attribute), &address, sizeof address);
    request.header.nlmsg_len =
        NLMSG_ALIGN(request.header.nlmsg_len) + RTA_ALIGN(attribute->rta_len);
  }
  char answer[512];
  ssize_t n = send(fd, &request, request.header.nlmsg_len, 0);
  if (n == static_cast<ssize_t>(request.header.nlmsg_len)) n = recv(fd, answer, sizeof answer, 0);
  const std::string why = n < 0 ? Errno("netlink") : "";
  close(fd);
  if (n < static_cast<ssize_t>(NLMSG_LENGTH(sizeof(nlmsgerr)))) {
    return Internal(why.empty() ? "netlink: a short answer" : why);
  }
  const auto* header = reinterpret_cast<const nlmsghdr*>(answer);
  const auto* error = static_cast<const nlmsgerr*>(NLMSG_DATA(header));
  if (header->nlmsg_type == NLMSG_ERROR && error->error != 0) {
    return Internal(std::string("cannot put the address on the loopback: ") +
                    strerror(-error->error));
  }
  return Status::Ok();
}

bool SameAddress(const sockaddr_in& a, const sockaddr_in& b) {
  return a.sin_addr.s_addr == b.sin_addr.s_addr && a.sin_port == b.sin_port;
}

}  // namespace

Result<sockaddr_in> ParseRelayEndpoint(const std::string& endpoint) {
  std::string rest = endpoint;
  const size_t scheme = rest.find("://");
  if (scheme != std::string::npos) {
    if (rest.substr(0, scheme) != "udp") {
      return InvalidArgument("board endpoint '" + endpoint +
                             "' cannot be isolated: the relay carries UDP only");
    }
    rest = rest.substr(scheme + 3);
  }
  const size_t colon = rest.rfind(':');
  sockaddr_in address{};
  address.sin_family = AF_INET;
  char* end = nullptr;
  const unsigned long port =
      colon == std::string::npos ? 0 : strtoul(rest.c_str() + colon + 1, &end, 10);
  if (colon == std::string::npos || port == 0 || port > 65535 || *end != '\0' ||
      inet_pton(AF_INET, rest.substr(0, colon).c_str(), &address.sin_addr) != 1) {
    return InvalidArgument("board endpoint '" + endpoint +
                           "' is not an IPv4 ADDRESS:PORT the relay can carry");
  }
  address.sin_port = htons(static_cast<uint16_t>(port));
  return address;
}

BoardRelay::~BoardRelay() {
  for (Endpoint& endpoint : endpoints_) {
    if (endpoint.task_fd >= 0) close(endpoint.task_fd);
    for (Peer& peer : endpoint.peers) close(peer.host_fd);
  }
  if (host_ns_ >= 0) close(host_ns_);
}

Result<std::unique_ptr<BoardRelay>> BoardRelay::Isolate(const std::vector<std::string>& endpoints) {
  std::unique_ptr<BoardRelay> relay(new BoardRelay());
  for (const std::string& text : endpoints) {
    auto board = ParseRelayEndpoint(text);
    if (!board.ok()) return board.status();
    bool seen = false;
    for (const Endpoint& e : relay->endpoints_) seen = seen || SameAddress(e.board, *board);
    if (!seen) relay->endpoints_.push_back(Endpoint{*board, -1, {}});
  }
  relay->host_ns_ = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (relay->host_ns_ < 0) return Internal(Errno("cannot open the host's network namespace"));
  if (unshare(CLONE_NEWNET) != 0) return Internal(Errno("cannot make a network namespace"));
  if (Status s = LoopbackUp(); !s.ok()) return s;
  for (Endpoint& endpoint : relay->endpoints_) {
    const bool loopback = (ntohl(endpoint.board.sin_addr.s_addr) >> 24) == 127;
    if (!loopback) {
      if (Status s = AddressOnLoopback(endpoint.board.sin_addr); !s.ok()) return s;
    }
    endpoint.task_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (endpoint.task_fd < 0 ||
        bind(endpoint.task_fd, reinterpret_cast<const sockaddr*>(&endpoint.board),
             sizeof endpoint.board) != 0) {
      char text[INET_ADDRSTRLEN] = "";
      inet_ntop(AF_INET, &endpoint.board.sin_addr, text, sizeof text);
      return Internal(Errno("cannot bind the task's side of " + std::string(text) + ":" +
                            std::to_string(ntohs(endpoint.board.sin_port))));
    }
  }
  return relay;
}

Status BoardRelay::ReturnToHost() {
  if (setns(host_ns_, CLONE_NEWNET) != 0) {
    return Internal(Errno("cannot go back to the host's network namespace"));
  }
  close(host_ns_);
  host_ns_ = -1;
  return Status::Ok();
}

void BoardRelay::Watch(std::vector<pollfd>* fds) const {
  for (const Endpoint& endpoint : endpoints_) {
    fds->push_back(pollfd{endpoint.task_fd, POLLIN, 0});
    for (const Peer& peer : endpoint.peers) fds->push_back(pollfd{peer.host_fd, POLLIN, 0});
  }
}

void BoardRelay::Relay(const std::vector<pollfd>& fds) {
  for (const pollfd& ready : fds) {
    if ((ready.revents & (POLLIN | POLLERR)) == 0) continue;
    for (Endpoint& endpoint : endpoints_) {
      if (endpoint.task_fd == ready.fd) FromTask(endpoint);
      for (Peer& peer : endpoint.peers) {
        if (peer.host_fd == ready.fd) FromBoard(endpoint, peer);
      }
    }
  }
}

// At most a few datagrams each turn, so that one busy socket cannot starve the others.
constexpr int kBurst = 64;

void BoardRelay::FromTask(Endpoint& endpoint) {
  for (int i = 0; i < kBurst; ++i) {
    sockaddr_in from{};
    socklen_t length = sizeof from;
    const ssize_t n = recvfrom(endpoint.task_fd, buffer_.data(), buffer_.size(), MSG_DONTWAIT,
                               reinterpret_cast<sockaddr*>(&from), &length);
    if (n < 0) return;  // nothing more (or an error the next datagram will not repeat)
    Peer* peer = PeerFor(endpoint, from);
    if (peer != nullptr) (void)send(peer->host_fd, buffer_.data(), static_cast<size_t>(n), 0);
  }
}

void BoardRelay::FromBoard(Endpoint& endpoint, Peer& peer) {
  peer.last_used = ++tick_;
  for (int i = 0; i < kBurst; ++i) {
    const ssize_t n = recv(peer.host_fd, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
    if (n < 0) return;
    (void)sendto(endpoint.task_fd, buffer_.data(), static_cast<size_t>(n), 0,
                 reinterpret_cast<const sockaddr*>(&peer.task_side), sizeof peer.task_side);
  }
}

BoardRelay::Peer* BoardRelay::PeerFor(Endpoint& endpoint, const sockaddr_in& task_side) {
  for (Peer& peer : endpoint.peers) {
    if (SameAddress(peer.task_side, task_side)) {
      peer.last_used = ++tick_;
      return &peer;
    }
  }
  if (endpoint.peers.size() >= kMaxPeersPerEndpoint) {
    auto idlest = endpoint.peers.begin();
    for (auto it = endpoint.peers.begin(); it != endpoint.peers.end(); ++it) {
      if (it->last_used < idlest->last_used) idlest = it;
    }
    close(idlest->host_fd);
    endpoint.peers.erase(idlest);
  }
  // Made after ReturnToHost, so in the host's namespace, where the board is.
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&endpoint.board), sizeof endpoint.board) != 0) {
    close(fd);
    return nullptr;
  }
  endpoint.peers.push_back(Peer{task_side, fd, ++tick_});
  return &endpoint.peers.back();
}

}  // namespace snn
