// What an agent tells its master after a fault, and in which order, seen by a fake master that
// records every call. The master must learn a board's new state before it learns that tasks on
// it were lost: otherwise it places the requeued job on the board it believes is still whole.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <optional>
#include <string>
#include <vector>

#include "common/rpc/frame.h"
#include "tests/integration/cluster.h"

namespace snn::testing {
namespace {

// One agent session seen from the master's side: reads the agent's calls, answers them, and
// makes calls of its own.
class FakeMasterSession {
 public:
  explicit FakeMasterSession(tcp::socket socket) : socket_(std::move(socket)) {
    timeval limit{10, 0};  // a silent agent fails the test instead of hanging it
    setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  }

  // True once the agent has called `method` at or after call number `from`. Reads frames
  // while it has not, answering every call with an empty OK (register gets a real answer).
  // False if the session ends first.
  template <typename Req, typename Resp>
  bool WaitForCall(const RpcMethod<Req, Resp>& method, size_t from = 0) {
    for (;;) {
      for (size_t i = from; i < calls_.size(); ++i) {
        if (calls_[i] == method.name) return true;
      }
      from = calls_.size();
      if (!Read()) return false;
    }
  }

  // Sends a request and reads until its answer; the agent's own calls meanwhile are answered.
  template <typename Req, typename Resp>
  v1::Envelope Call(const RpcMethod<Req, Resp>& method, const std::type_identity_t<Req>& request) {
    v1::Envelope e;
    e.set_id(++last_id_);
    e.set_method(std::string(method.name));
    e.set_payload(request.SerializeAsString());
    asio::write(socket_, asio::buffer(EncodeFrame(e)));
    for (;;) {
      auto got = Read();
      if (!got) return v1::Envelope();
      if (got->kind() == v1::Envelope::RESPONSE && got->id() == e.id()) return *got;
    }
  }

  // Every method the agent called, in order.
  const std::vector<std::string>& calls() const { return calls_; }

 private:
  std::optional<v1::Envelope> Read() {
    uint8_t header[4];
    boost::system::error_code ec;
    asio::read(socket_, asio::buffer(header), ec);
    if (ec) return std::nullopt;
    std::vector<uint8_t> body(DecodeFrameLength(header));
    asio::read(socket_, asio::buffer(body), ec);
    if (ec) return std::nullopt;
    auto e = DecodeEnvelope(body.data(), body.size());
    if (!e.ok()) return std::nullopt;
    if (e->kind() == v1::Envelope::REQUEST) {
      calls_.push_back(e->method());
      v1::Envelope answer;
      answer.set_id(e->id());
      answer.set_kind(v1::Envelope::RESPONSE);
      if (e->method() == rpc::kNodeRegister.name) {
        v1::RegisterResponse resp;
        resp.set_heartbeat_interval_ms(60000);
        answer.set_payload(resp.SerializeAsString());
      }
      asio::write(socket_, asio::buffer(EncodeFrame(answer)));
    }
    return *e;
  }

  tcp::socket socket_;
  uint64_t last_id_ = 0;
  std::vector<std::string> calls_;
};

v1::LaunchRequest WholeBoardTask() {
  v1::LaunchRequest launch;
  launch.set_job_id(1);
  launch.set_tenant_job_id(1);
  launch.set_tenant("default");
  launch.set_attempt(1);
  launch.set_time_limit_ms(600000);
  *launch.mutable_task() = ShellJob("sleep 600", 4).task();
  launch.mutable_task()->mutable_resources()->set_shape_width(2);
  launch.mutable_task()->mutable_resources()->set_shape_height(2);
  return launch;
}

void ExpectRegisterBeforeTaskStatus(const std::vector<std::string>& calls, size_t from) {
  size_t reg = calls.size(), status = calls.size();
  for (size_t i = from; i < calls.size(); ++i) {
    if (calls[i] == rpc::kNodeRegister.name && reg == calls.size()) reg = i;
    if (calls[i] == rpc::kNodeTaskStatus.name && status == calls.size()) status = i;
  }
  ASSERT_LT(reg, calls.size()) << "the agent did not describe its boards again";
  EXPECT_LT(reg, status) << "the lost task was reported before the board's new state";
}

class AgentReportOrderTest : public ::testing::TestWithParam<v1::SimFaultRequest::Kind> {};

TEST_P(AgentReportOrderTest, TheBoardsNewStateReachesTheMasterBeforeTheLostTask) {
  TestCluster cluster;
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const uint16_t port = acceptor.local_endpoint().port();
  // A 2x2 board that the task fills: a dead core leaves it no room to move.
  cluster.StartAgent("node1", SmallBoards(1, 2, 1000, 4),
                     {"--master=127.0.0.1:" + std::to_string(port), "--tls=false"});
  tcp::socket socket(io);
  acceptor.accept(socket);
  FakeMasterSession master(std::move(socket));
  ASSERT_TRUE(master.WaitForCall(rpc::kNodeRegister));
  v1::Envelope launched = master.Call(rpc::kAgentLaunch, WholeBoardTask());
  ASSERT_EQ(launched.code(), 0) << launched.error();
  v1::SimFaultRequest fault;
  fault.set_node("node1");
  fault.set_kind(GetParam());
  fault.set_x(1);
  fault.set_y(1);
  const size_t before = master.calls().size();
  v1::Envelope faulted = master.Call(rpc::kAgentSimFault, fault);
  ASSERT_EQ(faulted.code(), 0) << faulted.error();
  ASSERT_TRUE(master.WaitForCall(rpc::kNodeTaskStatus, before))
      << "the lost task was never reported";
  ExpectRegisterBeforeTaskStatus(master.calls(), before);
}

INSTANTIATE_TEST_SUITE_P(Faults, AgentReportOrderTest,
                         ::testing::Values(v1::SimFaultRequest::KILL_CORE,
                                           v1::SimFaultRequest::FAIL_BOARD),
                         [](const auto& info) {
                           return info.param == v1::SimFaultRequest::KILL_CORE ? "DeadCore"
                                                                               : "FailedBoard";
                         });

}  // namespace
}  // namespace snn::testing
