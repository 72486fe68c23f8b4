#include "nodeagent/spikes/spike_gateway.h"

#include <glog/logging.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <filesystem>

#include "common/rpc/clock_timer.h"

namespace snn {

using local_socket = asio::local::stream_protocol::socket;

// One task connection: reads a request, answers it, reads the next. Gateway thread only.
class GatewaySession : public std::enable_shared_from_this<GatewaySession> {
 public:
  GatewaySession(SpikeGateway& gateway, local_socket socket)
      : gateway_(gateway),
        socket_(std::move(socket)),
        timer_(socket_.get_executor(), gateway.clock()) {}

  void Start() { ReadHeader(); }
  void Close() {
    boost::system::error_code ec;
    timer_.Cancel();
    socket_.close(ec);
  }

 private:
  void ReadHeader() {
    asio::async_read(socket_, asio::buffer(&header_, sizeof header_),
                     [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                       if (ec) return self->End();
                       self->OnHeader();
                     });
  }

  void OnHeader() {
    const uint32_t count = header_.count;
    if (header_.op == wire::kHello) {
      if (count == 0 || count > wire::kMaxTokenBytes)
        return Fail("the token must be 1 to 256 bytes");
      token_.resize(count);
      return ReadPayload(token_.data(), count, [this] { OnHello(); });
    }
    if (!plane_) return Fail("send the task's token first (hello)");
    if (plane_->closed()) return Fail("the task has ended");
    switch (header_.op) {
      case wire::kInject:
        if (count > wire::kMaxSpikesPerBatch) {
          return Fail("a batch holds at most " + std::to_string(wire::kMaxSpikesPerBatch) +
                      " spikes; this one says " + std::to_string(count));
        }
        spikes_.resize(count);
        return ReadPayload(spikes_.data(), count * sizeof(wire::Spike),
                           [this] { TryInject(true); });
      case wire::kStep:
        if (count > wire::kMaxStepsPerCall) {
          return Fail("at most " + std::to_string(wire::kMaxStepsPerCall) + " steps a call");
        }
        return Reply(wire::kOk, plane_->Step(count), nullptr, 0);
      case wire::kRead: {
        spikes_.resize(std::min(count, wire::kMaxSpikesPerBatch));
        const size_t n = plane_->ReadOutput(spikes_.data(), spikes_.size());
        return Reply(wire::kOk, plane_->now_step(), spikes_.data(), n * sizeof(wire::Spike),
                     static_cast<uint32_t>(n));
      }
      case wire::kUsage:
        usage_ = plane_->Usage();
        return Reply(wire::kOk, 0, &usage_, sizeof usage_);
      default:
        return Fail("unknown request " + std::to_string(header_.op));
    }
  }

  template <typename Then>
  void ReadPayload(void* data, size_t bytes, Then then) {
    asio::async_read(
        socket_, asio::buffer(data, bytes),
        [self = shared_from_this(), then](const boost::system::error_code& ec, size_t) {
          // A task gone mid-batch: nothing of the batch was used.
          if (ec) return self->End();
          then();
        });
  }

  void OnHello() {
    if (plane_) return Fail("this connection has said hello already");
    plane_ = gateway_.FindByToken(token_);
    if (!plane_ || plane_->closed()) {
      plane_.reset();
      return Fail("unknown token: use the one in SNN_GATEWAY_TOKEN_FILE of a running task");
    }
    const auto& c = plane_->config();
    Reply(wire::kOk, uint64_t{c.num_cores} << 32 | c.neurons_per_core, nullptr, 0);
  }

  void TryInject(bool first_try) {
    const Admission a =
        plane_->Inject(spikes_.data(), spikes_.size(), gateway_.clock().NowUs(), first_try);
    switch (a.kind) {
      case Admission::kAdmitted:
        return Reply(wire::kOk, plane_->now_step(), nullptr, 0);
      case Admission::kRefused:
        return Reply(wire::kError, 0, a.error.data(), a.error.size());
      case Admission::kThrottled:
        if (header_.flags & wire::kNoWait) {
          return Reply(wire::kThrottled, static_cast<uint64_t>(a.wait_us), nullptr, 0);
        }
        timer_.WaitUs(a.wait_us, [self = shared_from_this()](bool expired) {
          if (!expired) return self->End();
          self->TryInject(false);
        });
    }
  }

  void Reply(uint16_t status, uint64_t value, const void* payload, size_t bytes,
             uint32_t count = UINT32_MAX) {
    reply_ = {status, header_.op, count == UINT32_MAX ? static_cast<uint32_t>(bytes) : count,
              value};
    std::array<asio::const_buffer, 2> buffers{asio::buffer(&reply_, sizeof reply_),
                                              asio::buffer(payload, bytes)};
    asio::async_write(socket_, buffers,
                      [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                        if (ec || self->closing_) return self->End();
                        self->ReadHeader();
                      });
  }

  // Answers with the error, then closes: after a malformed request the stream cannot be trusted.
  void Fail(const std::string& message) {
    closing_ = true;
    error_ = message;
    Reply(wire::kError, 0, error_.data(), error_.size());
  }

  void End() {
    Close();
    gateway_.Forget(shared_from_this());
  }

  SpikeGateway& gateway_;
  local_socket socket_;
  ClockTimer timer_;
  wire::RequestHeader header_;
  wire::ReplyHeader reply_;
  wire::UsageCounters usage_;
  std::string token_, error_;
  std::vector<wire::Spike> spikes_;
  std::shared_ptr<TaskSpikePlane> plane_;
  bool closing_ = false;
};

SpikeGateway::SpikeGateway(const Clock& clock, std::string socket_path)
    : clock_(clock), socket_path_(std::move(socket_path)), acceptor_(io_) {}

SpikeGateway::~SpikeGateway() { Stop(); }

Status SpikeGateway::Start() {
  if (socket_path_.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return InvalidArgument("gateway socket path is longer than " +
                           std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) +
                           " bytes: " + socket_path_);
  }
  std::error_code fs_ec;
  std::filesystem::remove(socket_path_, fs_ec);  // a previous agent's
  boost::system::error_code ec;
  acceptor_.open(asio::local::stream_protocol(), ec);
  if (!ec) acceptor_.bind(asio::local::stream_protocol::endpoint(socket_path_), ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return Unavailable("cannot listen on gateway socket " + socket_path_ + ": " + ec.message());
  ::chmod(socket_path_.c_str(), 0666);  // tasks may run as other users; tokens guard the plane
  Accept();
  thread_ = std::thread([this] { io_.run(); });
  return Status::Ok();
}

void SpikeGateway::Stop() {
  if (!thread_.joinable()) return;
  asio::post(io_, [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
    for (const auto& s : sessions_) s->Close();
    sessions_.clear();
    io_.stop();
  });
  thread_.join();
}

void SpikeGateway::Accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, local_socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) {
      auto session = std::make_shared<GatewaySession>(*this, std::move(socket));
      sessions_.insert(session);
      session->Start();
    }
    Accept();
  });
}

void SpikeGateway::Forget(const std::shared_ptr<GatewaySession>& session) {
  sessions_.erase(session);
}

std::shared_ptr<TaskSpikePlane> SpikeGateway::AddTask(SpikePlaneConfig config,
                                                      std::unique_ptr<SpikeNetwork> network) {
  const TaskKey key = config.key;
  auto plane =
      std::make_shared<TaskSpikePlane>(std::move(config), std::move(network), clock_.NowUs());
  std::lock_guard lock(mu_);
  if (auto it = planes_.find(key); it != planes_.end()) it->second->Close();
  planes_[key] = plane;
  return plane;
}

void SpikeGateway::RemoveTask(const TaskKey& key) {
  std::lock_guard lock(mu_);
  auto it = planes_.find(key);
  if (it == planes_.end()) return;
  it->second->Close();
  planes_.erase(it);
}

std::shared_ptr<TaskSpikePlane> SpikeGateway::Find(const TaskKey& key) const {
  std::lock_guard lock(mu_);
  auto it = planes_.find(key);
  return it == planes_.end() ? nullptr : it->second;
}

std::shared_ptr<TaskSpikePlane> SpikeGateway::FindByToken(const std::string& token) const {
  std::lock_guard lock(mu_);
  for (const auto& [key, plane] : planes_) {
    if (plane->TokenMatches(token)) return plane;
  }
  return nullptr;
}

}  // namespace snn
