// One task's spike plane in the gateway: its token, its KSPS token bucket, its network on the
// board, and what was counted for it. Every call checks the task's addresses first, so a batch
// is refused whole (nothing reaches the board) when any spike lies outside the task's cores.
// Thread contract: thread-safe (one mutex); the gateway calls from its thread, the agent reads
// usage from its own.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "nodeagent/hal/board.h"
#include "nodeagent/hal/spike_network.h"
#include "nodeagent/spikes/token_bucket.h"

namespace snn {

struct SpikePlaneConfig {
  TaskKey key;
  std::string token;
  uint64_t ksps = 0;       // the task's budget (SNN_MAX_KSPS); 0 admits nothing
  bool unlimited = false;  // no budget at all (benchmarks)
  uint32_t burst_ms = 20;  // the bucket holds this much of the budget
  uint32_t num_cores = 0;
  uint32_t neurons_per_core = 0;
};

struct Admission {
  enum Kind { kAdmitted, kThrottled, kRefused } kind = kAdmitted;
  int64_t wait_us = 0;  // kThrottled: how long until the batch could pass
  std::string error;    // kRefused: why, in one line
};

class TaskSpikePlane {
 public:
  TaskSpikePlane(SpikePlaneConfig config, std::unique_ptr<SpikeNetwork> network, int64_t now_us);

  // `first_try` false: a retry of a batch already counted as throttled.
  Admission Inject(const wire::Spike* spikes, size_t n, int64_t now_us, bool first_try);
  uint32_t Step(uint32_t steps);
  size_t ReadOutput(wire::Spike* out, size_t max);
  uint32_t now_step() const;

  // Counters, and the injection rate (KSPS) measured over the last second or more.
  wire::UsageCounters Usage() const;
  double RateKsps(int64_t now_us);

  // The task ended: every later call on its connections fails.
  void Close();
  bool closed() const;

  bool TokenMatches(const std::string& token) const;
  const SpikePlaneConfig& config() const { return config_; }

 private:
  const SpikePlaneConfig config_;
  mutable std::mutex mu_;
  std::unique_ptr<SpikeNetwork> network_;
  TokenBucket bucket_;
  wire::UsageCounters counted_;  // injected, throttled, refused
  bool closed_ = false;
  int64_t rate_window_us_;
  uint64_t rate_window_injected_ = 0;
  double rate_ksps_ = 0;
};

}  // namespace snn
