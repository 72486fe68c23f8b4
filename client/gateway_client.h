// The C++ client library for tasks: talks to the node agent's spike gateway (SNN_GATEWAY) with
// the task's token (read from SNN_GATEWAY_TOKEN_FILE, a file only the task's user can read).
// Depends on nothing but the C++ library and POSIX.
//
//   snn::GatewayClient gw = snn::GatewayClient::FromEnvironment();
//   gw.Inject(spikes);          // waits while the task is over its KSPS budget
//   gw.Step(100);               // advance the network 100 time steps
//   auto out = gw.ReadOutput(); // output spikes, oldest first
//
// Errors (no gateway, a wrong token, spikes outside the task's cores) throw GatewayError with
// the gateway's one-line reason. After a refused batch the connection stays usable.
// Thread contract: one GatewayClient per thread; open several for parallel streams.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "client/spike_wire.h"

namespace snn {

using Spike = wire::Spike;

class GatewayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class GatewayClient {
 public:
  GatewayClient(const std::string& socket_path, const std::string& token);
  static GatewayClient FromEnvironment();
  ~GatewayClient();
  GatewayClient(GatewayClient&& other) noexcept;
  GatewayClient& operator=(GatewayClient&&) = delete;
  GatewayClient(const GatewayClient&) = delete;

  uint32_t num_cores() const { return num_cores_; }
  uint32_t neurons_per_core() const { return neurons_per_core_; }

  // Sends the spikes in batches, each admitted whole; waits while over budget. Returns the
  // network's step after the last batch.
  uint32_t Inject(const Spike* spikes, size_t n);
  uint32_t Inject(const std::vector<Spike>& spikes) { return Inject(spikes.data(), spikes.size()); }

  // One batch (at most wire::kMaxSpikesPerBatch) that does not wait: returns 0 if admitted, or
  // the microseconds to wait before trying again.
  uint64_t TryInject(const Spike* spikes, size_t n);

  // Advances the network; returns the step reached.
  uint32_t Step(uint32_t steps);

  // Output spikes so far (at most `max`), oldest first.
  std::vector<Spike> ReadOutput(size_t max = wire::kMaxSpikesPerBatch);

  wire::UsageCounters Usage();

 private:
  wire::ReplyHeader Call(wire::Op op, uint16_t flags, uint32_t count, const void* payload,
                         size_t bytes, std::vector<char>* reply_payload = nullptr);
  void SendAll(const void* data, size_t bytes);
  void ReceiveAll(void* data, size_t bytes);

  int fd_ = -1;
  uint32_t num_cores_ = 0, neurons_per_core_ = 0;
};

}  // namespace snn
