#include "client/gateway_client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace snn {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    throw GatewayError(std::string(name) + " is not set: is this running as an snn task?");
  }
  return v;
}

}  // namespace

GatewayClient::GatewayClient(const std::string& socket_path, const std::string& token) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    throw GatewayError("gateway socket path is too long: " + socket_path);
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw GatewayError(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw GatewayError("cannot reach the spike gateway at " + socket_path + ": " +
                       std::strerror(err));
  }
  try {
    const auto reply =
        Call(wire::kHello, 0, static_cast<uint32_t>(token.size()), token.data(), token.size());
    num_cores_ = static_cast<uint32_t>(reply.value >> 32);
    neurons_per_core_ = static_cast<uint32_t>(reply.value);
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

// The token from the file the agent wrote for the task alone (SNN_GATEWAY_TOKEN_FILE).
std::string ReadToken(const std::string& file) {
  FILE* f = std::fopen(file.c_str(), "re");
  if (f == nullptr) {
    throw GatewayError("cannot read the gateway token " + file + ": " + std::strerror(errno));
  }
  char buf[256];
  const size_t n = std::fread(buf, 1, sizeof buf, f);
  std::fclose(f);
  std::string token(buf, n);
  while (!token.empty() && (token.back() == '\n' || token.back() == ' ')) token.pop_back();
  return token;
}

GatewayClient GatewayClient::FromEnvironment() {
  return GatewayClient(Env("SNN_GATEWAY"), ReadToken(Env("SNN_GATEWAY_TOKEN_FILE")));
}

GatewayClient::~GatewayClient() {
  if (fd_ >= 0) ::close(fd_);
}

GatewayClient::GatewayClient(GatewayClient&& other) noexcept
    : fd_(other.fd_), num_cores_(other.num_cores_), neurons_per_core_(other.neurons_per_core_) {
  other.fd_ = -1;
}

void GatewayClient::SendAll(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::send(fd_, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw GatewayError(std::string("gateway connection lost: ") + std::strerror(errno));
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void GatewayClient::ReceiveAll(void* data, size_t bytes) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::recv(fd_, p, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) throw GatewayError("the spike gateway closed the connection");
    if (n < 0) throw GatewayError(std::string("gateway connection lost: ") + std::strerror(errno));
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

wire::ReplyHeader GatewayClient::Call(wire::Op op, uint16_t flags, uint32_t count,
                                      const void* payload, size_t bytes,
                                      std::vector<char>* reply_payload) {
  if (fd_ < 0) throw GatewayError("not connected to the spike gateway");
  const wire::RequestHeader header{op, flags, count};
  SendAll(&header, sizeof header);
  if (bytes > 0) SendAll(payload, bytes);
  wire::ReplyHeader reply;
  ReceiveAll(&reply, sizeof reply);
  const size_t reply_bytes = op == wire::kRead && reply.status == wire::kOk
                                 ? size_t{reply.count} * sizeof(Spike)
                                 : reply.count;
  std::vector<char> body(reply_bytes);
  if (reply_bytes > 0) ReceiveAll(body.data(), reply_bytes);
  if (reply.status == wire::kError) {
    throw GatewayError("spike gateway: " + std::string(body.begin(), body.end()));
  }
  if (reply_payload != nullptr) *reply_payload = std::move(body);
  return reply;
}

uint32_t GatewayClient::Inject(const Spike* spikes, size_t n) {
  uint32_t step = 0;
  size_t done = 0;
  do {
    const size_t batch = std::min<size_t>(n - done, wire::kMaxSpikesPerBatch);
    step = static_cast<uint32_t>(
        Call(wire::kInject, 0, static_cast<uint32_t>(batch), spikes + done, batch * sizeof(Spike))
            .value);
    done += batch;
  } while (done < n);
  return step;
}

uint64_t GatewayClient::TryInject(const Spike* spikes, size_t n) {
  if (n > wire::kMaxSpikesPerBatch) {
    throw GatewayError("a batch holds at most " + std::to_string(wire::kMaxSpikesPerBatch) +
                       " spikes");
  }
  const auto reply =
      Call(wire::kInject, wire::kNoWait, static_cast<uint32_t>(n), spikes, n * sizeof(Spike));
  return reply.status == wire::kThrottled ? std::max<uint64_t>(1, reply.value) : 0;
}

uint32_t GatewayClient::Step(uint32_t steps) {
  uint32_t step = 0;
  do {
    const uint32_t now = std::min(steps, wire::kMaxStepsPerCall);
    step = static_cast<uint32_t>(Call(wire::kStep, 0, now, nullptr, 0).value);
    steps -= now;
  } while (steps > 0);
  return step;
}

std::vector<Spike> GatewayClient::ReadOutput(size_t max) {
  std::vector<Spike> out;
  std::vector<char> body;
  while (out.size() < max) {
    const uint32_t want =
        static_cast<uint32_t>(std::min<size_t>(max - out.size(), wire::kMaxSpikesPerBatch));
    const auto reply = Call(wire::kRead, 0, want, nullptr, 0, &body);
    const auto* first = reinterpret_cast<const Spike*>(body.data());
    out.insert(out.end(), first, first + reply.count);
    if (reply.count < want) break;
  }
  return out;
}

wire::UsageCounters GatewayClient::Usage() {
  std::vector<char> body;
  Call(wire::kUsage, 0, 0, nullptr, 0, &body);
  wire::UsageCounters u;
  if (body.size() != sizeof u) throw GatewayError("spike gateway: usage answer of unexpected size");
  std::memcpy(&u, body.data(), sizeof u);
  return u;
}

}  // namespace snn
