// The spike gateway with real Unix sockets and the task client library: tokens, isolation of
// tasks, malformed and interrupted requests, and KSPS enforcement.
#include "nodeagent/spikes/spike_gateway.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "client/gateway_client.h"
#include "common/model/model.h"
#include "nodeagent/hal/lif_network.h"

namespace snn {
namespace {

using local = asio::local::stream_protocol;

v1::Model ChainModel() {
  auto model = ParseModelJson(R"({"name": "chain", "populations": [
      {"name": "in", "size": 4, "role": "input"}, {"name": "out", "size": 4, "role": "output"}],
    "projections": [{"from": "in", "to": "out", "connectivity": "one_to_one", "weight": 2}]})");
  EXPECT_TRUE(model.ok());
  return *model;
}

class SpikeGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/snn-gw-XXXXXX";
    dir_ = mkdtemp(tmpl);
    gateway_ = std::make_unique<SpikeGateway>(clock_, dir_ + "/gateway.sock");
    ASSERT_TRUE(gateway_->Start().ok());
  }
  void TearDown() override {
    gateway_->Stop();
    std::filesystem::remove_all(dir_);
  }

  // A task of `cores` cores (4 neurons each) on a chain network, with `ksps` budget.
  std::shared_ptr<TaskSpikePlane> AddTask(uint64_t job, const std::string& token, uint64_t ksps,
                                          uint32_t cores = 2, bool unlimited = false) {
    SimNetworkLimits limits;
    limits.num_cores = cores;
    limits.neurons_per_core = 4;
    auto net = LifNetwork::Build(ChainModel(), limits);
    EXPECT_TRUE(net.ok());
    SpikePlaneConfig c;
    c.key = TaskKey{job, 0, 1};
    c.token = token;
    c.ksps = ksps;
    c.unlimited = unlimited;
    c.num_cores = cores;
    c.neurons_per_core = 4;
    return gateway_->AddTask(c, std::move(net).value());
  }

  std::string path() const { return gateway_->socket_path(); }

  ManualClock clock_;  // the token buckets and the gateway's waits run on it
  std::string dir_;
  std::unique_ptr<SpikeGateway> gateway_;
};

// Sends raw bytes; returns the gateway's answer header, or status 0xFFFF if it closed first.
wire::ReplyHeader RawCall(local::socket& s, const std::string& bytes, std::string* text = nullptr) {
  boost::system::error_code ec;
  asio::write(s, asio::buffer(bytes), ec);
  wire::ReplyHeader reply{0xFFFF, 0, 0, 0};
  asio::read(s, asio::buffer(&reply, sizeof reply), ec);
  if (ec) return wire::ReplyHeader{0xFFFF, 0, 0, 0};
  std::string body(reply.count, '\0');
  asio::read(s, asio::buffer(body), ec);
  if (text) *text = body;
  return reply;
}

std::string Header(uint16_t op, uint32_t count, uint16_t flags = 0) {
  wire::RequestHeader h{op, flags, count};
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

bool ClosedByPeer(local::socket& s) {
  char c;
  boost::system::error_code ec;
  s.read_some(asio::buffer(&c, 1), ec);
  return ec == asio::error::eof || ec == asio::error::connection_reset;
}

TEST_F(SpikeGatewayTest, ChainThroughTheGatewayGivesOutputsAtTheExpectedSteps) {
  AddTask(1, "token-one", 1000);
  GatewayClient gw(path(), "token-one");
  EXPECT_EQ(gw.num_cores(), 2u);
  EXPECT_EQ(gw.neurons_per_core(), 4u);
  std::vector<Spike> in = {{0, 0, 3}, {0, 2, 5}};
  gw.Inject(in);
  EXPECT_EQ(gw.Step(10), 10u);
  const auto out = gw.ReadOutput();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].core, 1);  // out lies on core 1
  EXPECT_EQ(out[0].neuron, 0);
  EXPECT_EQ(out[0].step, 4u);
  EXPECT_EQ(out[1].neuron, 2);
  EXPECT_EQ(out[1].step, 6u);
  const auto usage = gw.Usage();
  EXPECT_EQ(usage.injected, 2u);
  EXPECT_EQ(usage.outputs, 2u);
  EXPECT_EQ(usage.delivered, 4u);
}

TEST_F(SpikeGatewayTest, AWrongTokenIsRefusedAndOtherTasksGoOn) {
  AddTask(1, "right-token", 1000);
  GatewayClient ok(path(), "right-token");
  try {
    GatewayClient bad(path(), "wrong-token");
    FAIL() << "a wrong token was accepted";
  } catch (const GatewayError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown token"), std::string::npos) << e.what();
  }
  // Anything before hello is refused too.
  asio::io_context io;
  local::socket raw(io);
  raw.connect(local::endpoint(path()));
  EXPECT_EQ(RawCall(raw, Header(wire::kStep, 1)).status, wire::kError);
  EXPECT_TRUE(ClosedByPeer(raw));
  EXPECT_EQ(ok.Step(1), 1u);
}

TEST_F(SpikeGatewayTest, SpikesOutsideTheTasksCoresAreRefusedAndTheOtherTaskSeesNothing) {
  auto a = AddTask(1, "token-a", 1000, /*cores=*/2);
  auto b = AddTask(2, "token-b", 1000, /*cores=*/2);
  GatewayClient ga(path(), "token-a"), gb(path(), "token-b");
  std::vector<Spike> batch = {{0, 1, 0}, {5, 0, 0}};  // core 5: not task a's
  try {
    ga.Inject(batch);
    FAIL() << "a spike outside the task's cores was admitted";
  } catch (const GatewayError& e) {
    EXPECT_NE(std::string(e.what()).find("logical cores 0-1"), std::string::npos) << e.what();
  }
  std::vector<Spike> no_neuron = {{1, 3, 0}};
  ga.Inject(std::vector<Spike>{{1, 3, 0}});  // core 1 neuron 3 exists (out[3])
  std::vector<Spike> beyond = {{1, 4, 0}};
  EXPECT_THROW(ga.Inject(beyond), GatewayError);
  gb.Step(5);
  EXPECT_TRUE(gb.ReadOutput().empty());
  EXPECT_EQ(b->Usage().injected, 0u);
  EXPECT_EQ(b->Usage().delivered, 0u);
  EXPECT_EQ(a->Usage().refused, 3u);   // the whole refused batches
  EXPECT_EQ(a->Usage().injected, 1u);  // the connection stayed usable
  // Nothing of the refused batch reached task a's board either: its neuron 1 never fired.
  ga.Step(5);
  for (const Spike& s : ga.ReadOutput()) EXPECT_NE(s.neuron, 1) << "from the refused batch";
}

TEST_F(SpikeGatewayTest, MalformedRequestsCloseOnlyTheirConnection) {
  AddTask(1, "token", 1000);
  GatewayClient good(path(), "token");
  asio::io_context io;
  for (const std::string& bad : {Header(wire::kInject, wire::kMaxSpikesPerBatch + 1), Header(77, 0),
                                 Header(wire::kStep, wire::kMaxStepsPerCall + 1)}) {
    local::socket raw(io);
    raw.connect(local::endpoint(path()));
    ASSERT_EQ(RawCall(raw, Header(wire::kHello, 5) + "token").status, wire::kOk);
    std::string text;
    EXPECT_EQ(RawCall(raw, bad, &text).status, wire::kError);
    EXPECT_FALSE(text.empty());
    EXPECT_TRUE(ClosedByPeer(raw));
  }
  local::socket huge(io);
  huge.connect(local::endpoint(path()));
  EXPECT_EQ(RawCall(huge, Header(wire::kHello, 100000)).status, wire::kError);
  EXPECT_EQ(good.Step(2), 2u);
}

TEST_F(SpikeGatewayTest, ATaskThatDisconnectsMidBatchLeavesNoTrace) {
  auto plane = AddTask(1, "token", 1000);
  {
    asio::io_context io;
    local::socket raw(io);
    raw.connect(local::endpoint(path()));
    ASSERT_EQ(RawCall(raw, Header(wire::kHello, 5) + "token").status, wire::kOk);
    std::vector<Spike> half(50, Spike{0, 0, 0});
    std::string bytes = Header(wire::kInject, 100);
    bytes.append(reinterpret_cast<const char*>(half.data()), half.size() * sizeof(Spike));
    asio::write(raw, asio::buffer(bytes));
  }  // closed with 50 of its 100 spikes sent
  GatewayClient gw(path(), "token");
  gw.Inject(std::vector<Spike>(10, Spike{0, 1, 0}));
  gw.Step(3);
  EXPECT_EQ(plane->Usage().injected, 10u);
  const auto out = gw.ReadOutput();
  ASSERT_EQ(out.size(), 1u);  // only in[1] fired (once: one step), in[0] never did
  EXPECT_EQ(out[0].neuron, 1);
}

TEST_F(SpikeGatewayTest, ATaskWithoutBudgetOrEndedIsToldSo) {
  AddTask(1, "no-budget", 0);
  GatewayClient gw(path(), "no-budget");
  try {
    gw.Inject(std::vector<Spike>{{0, 0, 0}});
    FAIL();
  } catch (const GatewayError& e) {
    EXPECT_NE(std::string(e.what()).find("ksps is 0"), std::string::npos) << e.what();
  }
  gateway_->RemoveTask(TaskKey{1, 0, 1});
  EXPECT_THROW(gw.Step(1), GatewayError);
}

// Injects 500-spike batches without waiting until the gateway throttles; returns how many
// spikes it admitted.
uint64_t InjectUntilThrottled(GatewayClient& gw) {
  std::vector<Spike> batch(500, Spike{0, 0, 0});
  uint64_t admitted = 0;
  while (gw.TryInject(batch.data(), batch.size()) == 0) admitted += batch.size();
  return admitted;
}

// Two seconds of the gateway's clock, one millisecond at a time, each task injecting as fast as
// it is let: each gets its own budget, whatever the other does, to within its burst (20 ms of
// budget) and one batch.
TEST_F(SpikeGatewayTest, TwoTasksOnOneBoardEachGetTheirOwnBudget) {
  auto slow = AddTask(1, "slow", 100);
  auto fast = AddTask(2, "fast", 300);
  GatewayClient slow_gw(path(), "slow"), fast_gw(path(), "fast");
  uint64_t slow_admitted = 0, fast_admitted = 0;
  for (int ms = 0; ms < 2000; ++ms) {
    slow_admitted += InjectUntilThrottled(slow_gw);
    fast_admitted += InjectUntilThrottled(fast_gw);
    clock_.AdvanceMs(1);
  }
  EXPECT_GE(slow_admitted, 100u * 2000 - 500);
  EXPECT_LE(slow_admitted, 100u * 2000 + 100 * 20 + 500);
  EXPECT_GE(fast_admitted, 300u * 2000 - 500);
  EXPECT_LE(fast_admitted, 300u * 2000 + 300 * 20 + 500);
  // Once a millisecond, the 500 spikes of the batch told to wait.
  EXPECT_EQ(slow->Usage().throttled, 2000u * 500);
  EXPECT_EQ(fast->Usage().throttled, 2000u * 500);
}

// A blocking inject over budget waits in the gateway for the clock, not for real time: it
// returns once the gateway's clock has moved by the wait the bucket asked for, and not before.
TEST_F(SpikeGatewayTest, AThrottledInjectWaitsForTheGatewaysClock) {
  AddTask(1, "slow", 100);
  GatewayClient gw(path(), "slow");
  std::vector<Spike> batch(500, Spike{0, 0, 0});
  InjectUntilThrottled(gw);
  const uint64_t wait_us = gw.TryInject(batch.data(), batch.size());
  ASSERT_GT(wait_us, 0u);
  std::atomic<bool> returned{false};
  std::thread task([&] {
    gw.Inject(batch);
    returned = true;
  });
  // The gateway has armed its timer on the clock once a call waits for time to move.
  while (clock_.pending_calls() == 0) std::this_thread::yield();
  clock_.AdvanceUs(static_cast<int64_t>(wait_us) - 1);
  EXPECT_EQ(clock_.pending_calls(), 1u) << "the gateway's wait ended before its time";
  EXPECT_FALSE(returned);
  clock_.AdvanceUs(1);
  task.join();
  EXPECT_TRUE(returned);
}

}  // namespace
}  // namespace snn
