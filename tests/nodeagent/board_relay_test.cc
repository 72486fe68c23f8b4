// The relay that isolates a pass-through task's network, in network namespaces of the test's
// own: a forked child plays the host (a namespace with a board at 192.0.2.7, outside
// 127.0.0.0/8 as real boards are, and one at 127.0.0.1), isolates a "task" there and relays for
// it. The task reaches its two endpoints and nothing else. No packet leaves the namespaces.
#include "nodeagent/tasks/board_relay.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace snn {
namespace {

TEST(RelayEndpointTest, TakesUdpAddressesAndRefusesTheRest) {
  auto plain = ParseRelayEndpoint("192.0.2.7:4000");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(ntohs(plain->sin_port), 4000);
  EXPECT_TRUE(ParseRelayEndpoint("udp://127.0.0.3:9").ok());
  EXPECT_NE(ParseRelayEndpoint("tcp://127.0.0.3:9").status().message().find("UDP only"),
            std::string::npos);
  for (const char* bad :
       {"127.0.0.3", "127.0.0.3:0", "127.0.0.3:70000", "board7:4000", "", ":9", "127.0.0.3:9x"}) {
    EXPECT_FALSE(ParseRelayEndpoint(bad).ok()) << bad;
  }
}

int BoundUdp(const char* address, uint16_t port) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, address, &a.sin_addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return -1;
  return fd;
}

// The task: a datagram to each endpoint, answered by its board ("echo:" + it), and one to each
// address the relay does not carry, which nothing may answer. Exit 0 when all of that held.
int Task() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  timeval wait{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  auto send_to = [&](const char* address, uint16_t port, const std::string& text) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, address, &a.sin_addr);
    sendto(fd, text.data(), text.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a);
  };
  // Not relayed: another board's address, and the host's own port beside the relayed one.
  send_to("192.0.2.8", 4000, "intruder");
  send_to("127.0.0.1", 4002, "intruder");
  for (const auto& [address, port] : {std::pair{"192.0.2.7", 4000}, {"127.0.0.1", 4001}}) {
    send_to(address, static_cast<uint16_t>(port), "hello");
    char buf[100] = {};
    const ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    if (n <= 0 || std::string(buf) != "echo:hello") return 10;
  }
  return 0;
}

// The host: boards that echo, the relay, and the task; its exit code says how it went.
int Host() {
  if (unshare(CLONE_NEWNET) != 0 || system("ip link set lo up && ip addr add 192.0.2.7/32 dev lo"
                                           " && ip addr add 192.0.2.8/32 dev lo") != 0) {
    return 2;
  }
  const int boards[] = {BoundUdp("192.0.2.7", 4000), BoundUdp("127.0.0.1", 4001),
                        BoundUdp("192.0.2.8", 4000), BoundUdp("127.0.0.1", 4002)};
  for (const int fd : boards) {
    if (fd < 0) return 3;
  }
  auto relay = BoardRelay::Isolate({"udp://192.0.2.7:4000", "127.0.0.1:4001"});
  if (!relay.ok()) {
    fprintf(stderr, "%s\n", relay.status().message().c_str());
    return 4;
  }
  const pid_t task = fork();
  if (task == 0) _exit(Task());
  if (!(*relay)->ReturnToHost().ok()) return 5;
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, task, 0));
  int intruders = 0;
  for (;;) {
    std::vector<pollfd> fds = {{pidfd, POLLIN, 0}};
    for (const int fd : boards) fds.push_back(pollfd{fd, POLLIN, 0});
    (*relay)->Watch(&fds);
    poll(fds.data(), fds.size(), -1);
    if (fds[0].revents & POLLIN) break;
    for (size_t i = 0; i < 4; ++i) {
      if ((fds[1 + i].revents & POLLIN) == 0) continue;
      char buf[100] = {};
      sockaddr_in from{};
      socklen_t length = sizeof from;
      const ssize_t n =
          recvfrom(boards[i], buf, sizeof buf - 1, 0, reinterpret_cast<sockaddr*>(&from), &length);
      if (n <= 0) continue;
      if (i >= 2) ++intruders;
      const std::string answer = "echo:" + std::string(buf);
      sendto(boards[i], answer.data(), answer.size(), 0, reinterpret_cast<sockaddr*>(&from),
             length);
    }
    (*relay)->Relay(fds);
  }
  int status = 0;
  waitpid(task, &status, 0);
  if (intruders != 0) return 6;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 7;
}

TEST(BoardRelayTest, ATaskReachesItsEndpointsAndNothingElse) {
  if (geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
  const pid_t host = fork();
  if (host == 0) _exit(Host());
  int status = 0;
  ASSERT_EQ(waitpid(host, &status, 0), host);
  ASSERT_TRUE(WIFEXITED(status));
  // 2-5: the namespaces could not be set up; 6: a datagram reached an address not relayed;
  // 10: an endpoint did not answer through the relay.
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace snn
