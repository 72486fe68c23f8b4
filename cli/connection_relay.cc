#include "cli/connection_relay.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <thread>
#include <vector>

#include "common/base/duration.h"
#include "common/base/file_util.h"
#include "common/rpc/frame.h"

namespace snn {

namespace {

bool Reply(int fd, uint64_t id, const Status& status, const std::string& payload) {
  v1::Envelope envelope;
  envelope.set_id(id);
  envelope.set_kind(v1::Envelope::RESPONSE);
  envelope.set_code(static_cast<int>(status.code()));
  envelope.set_error(status.message());
  envelope.set_payload(payload);
  return WriteAll(fd, EncodeFrame(envelope));
}

class Relay {
 public:
  Relay(const RelayConfig& config, const Clock& clock)
      : config_(config), clock_(clock), last_active_ms_(clock.NowMs()) {}

  void Run(int listen_fd) {
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigaddset(&term, SIGINT);
    sigprocmask(SIG_BLOCK, &term, nullptr);
    signal(SIGPIPE, SIG_IGN);  // a command gone before its answer: a failed write, not a death
    const int signals = signalfd(-1, &term, SFD_CLOEXEC);
    stop_pipe_ok_ = pipe2(stop_pipe_, O_CLOEXEC) == 0;
    while (true) {
      int64_t wait_ms = config_.idle_ms;
      if (clients_ == 0) {
        wait_ms = last_active_ms_ + config_.idle_ms - clock_.NowMs();
        if (wait_ms <= 0) break;
      }
      pollfd fds[3] = {{listen_fd, POLLIN, 0}, {signals, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
      const int ready =
          poll(fds, stop_pipe_ok_ ? 3 : 2,
               static_cast<int>(std::min<int64_t>(std::max<int64_t>(wait_ms, 1), 60000)));
      if (ready < 0 && errno != EINTR) break;
      if (ready <= 0) continue;
      if (fds[1].revents != 0 || (stop_pipe_ok_ && fds[2].revents != 0)) break;
      if (fds[0].revents != 0) Accept(listen_fd);
    }
    unlink(config_.socket_path.c_str());
    close(listen_fd);
  }

 private:
  void Touch() { last_active_ms_ = clock_.NowMs(); }

  void Accept(int listen_fd) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    ucred peer{};
    socklen_t size = sizeof(peer);
    // Only this user's own processes; and a bounded number of them.
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || peer.uid != geteuid() ||
        clients_ >= config_.max_clients) {
      close(fd);
      return;
    }
    ++clients_;
    Touch();
    std::thread([this, fd] { Serve(fd); }).detach();
  }

  // One command's connection: its frames, one request at a time, to its upstream and back.
  void Serve(int fd) {
    std::unique_ptr<RpcClient> upstream;
    std::string body;
    while (true) {
      char header[kFrameHeaderBytes];
      if (!ReadAll(fd, header, sizeof(header))) break;
      const uint32_t size = DecodeFrameLength(reinterpret_cast<const uint8_t*>(header));
      if (size > kDefaultMaxFrameBytes) break;
      body.resize(size);
      if (!ReadAll(fd, body.data(), size)) break;
      auto request = DecodeEnvelope(reinterpret_cast<const uint8_t*>(body.data()), size);
      if (!request.ok()) break;
      Touch();
      const uint64_t id = request->id();
      if (request->method() == kRelayStatusMethod) {
        if (!Reply(fd, id, Status::Ok(), StatusLine())) break;
        continue;
      }
      if (request->method() == kRelayStopMethod) {
        Reply(fd, id, Status::Ok(), "");
        if (stop_pipe_ok_) (void)!write(stop_pipe_[1], "x", 1);
        break;
      }
      if (!upstream) {
        auto taken = Take();
        if (!taken.ok()) {
          if (!Reply(fd, id, taken.status(), "")) break;
          continue;
        }
        upstream = std::move(taken).value();
      }
      auto response = upstream->Forward(std::move(request).value());
      ++relayed_;
      if (!response.ok()) {
        if (!Reply(fd, id, response.status(), "")) break;
        continue;
      }
      response->set_id(id);
      if (!WriteAll(fd, EncodeFrame(*response))) break;
    }
    close(fd);
    if (upstream) Give(std::move(upstream));
    Touch();
    --clients_;
  }

  Result<std::unique_ptr<RpcClient>> Take() {
    {
      std::lock_guard lock(mu_);
      while (!pool_.empty()) {
        std::unique_ptr<RpcClient> kept = std::move(pool_.back());
        pool_.pop_back();
        if (kept->Usable()) return kept;
        --upstreams_;  // closed by the master meanwhile (a restart, a takeover)
      }
    }
    auto made = config_.connect();
    if (made.ok()) ++upstreams_;
    return made;
  }

  void Give(std::unique_ptr<RpcClient> upstream) {
    std::lock_guard lock(mu_);
    if (upstream->Usable()) {
      pool_.push_back(std::move(upstream));
    } else {
      --upstreams_;
    }
  }

  std::string StatusLine() const {
    return "pid " + std::to_string(getpid()) + ", to " + config_.master +
           ": connections to the master: " + std::to_string(upstreams_) +
           ", other commands connected: " + std::to_string(clients_ - 1) +
           ", requests relayed: " + std::to_string(relayed_) + "; ends after " +
           FormatDurationUnit(static_cast<uint64_t>(config_.idle_ms / 1000)) + " with no command";
  }

  const RelayConfig& config_;
  const Clock& clock_;
  std::atomic<int64_t> last_active_ms_;
  std::atomic<size_t> clients_{0};
  std::atomic<size_t> upstreams_{0};
  std::atomic<uint64_t> relayed_{0};
  int stop_pipe_[2] = {-1, -1};
  bool stop_pipe_ok_ = false;
  std::mutex mu_;
  std::vector<std::unique_ptr<RpcClient>> pool_;
};

}  // namespace

void RunConnectionRelay(const RelayConfig& config, int listen_fd, const Clock& clock) {
  // Threads still serving when it ends are ended with the process (the caller _exits).
  auto* relay = new Relay(config, clock);
  relay->Run(listen_fd);
}

}  // namespace snn
