#include "drivers/ether/udp_exchange.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace snn {

Result<std::string> UdpExchange(const HostPort& to, const std::string& request, int wait_ms,
                                int tries) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(to.port);
  if (inet_pton(AF_INET, to.host.c_str(), &a.sin_addr) != 1) {
    return InvalidArgument(to.host + " is not an IPv4 address");
  }
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unavailable("cannot open a UDP socket");
  // Connected: only the board's answers come back on it.
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return Unavailable("cannot reach " + to.ToString());
  }
  for (int attempt = 0; attempt < tries; ++attempt) {
    if (send(fd, request.data(), request.size(), 0) < 0) continue;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, wait_ms) <= 0) continue;
    char buf[65536];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0) continue;  // refused (nothing listens): try again, then give up
    close(fd);
    return std::string(buf, static_cast<size_t>(n));
  }
  close(fd);
  return Unavailable(to.ToString() + " did not answer \"" + request.substr(0, 16) + "\"");
}

}  // namespace snn
