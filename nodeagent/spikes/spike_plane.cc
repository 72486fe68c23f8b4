#include "nodeagent/spikes/spike_plane.h"

namespace snn {
namespace {

constexpr uint64_t kUnlimitedRate = uint64_t{1} << 62;

std::string DescribeBadSpike(size_t i, const wire::Spike& s, const SpikePlaneConfig& c) {
  std::string where = "spike " + std::to_string(i) + " of the batch addresses core " +
                      std::to_string(s.core) + " neuron " + std::to_string(s.neuron) + "; ";
  if (s.core >= c.num_cores) {
    return where + "this task has logical cores 0-" + std::to_string(c.num_cores - 1);
  }
  return where + "no neuron of this task's network is there";
}

}  // namespace

TaskSpikePlane::TaskSpikePlane(SpikePlaneConfig config, std::unique_ptr<SpikeNetwork> network,
                               int64_t now_us)
    : config_(std::move(config)),
      network_(std::move(network)),
      bucket_(config_.unlimited ? kUnlimitedRate : config_.ksps * 1000,
              config_.unlimited ? kUnlimitedRate
                                : std::max<uint64_t>(1, config_.ksps * config_.burst_ms),
              now_us),
      rate_window_us_(now_us) {}

Admission TaskSpikePlane::Inject(const wire::Spike* spikes, size_t n, int64_t now_us,
                                 bool first_try) {
  std::lock_guard lock(mu_);
  if (closed_) return {Admission::kRefused, 0, "the task has ended"};
  for (size_t i = 0; i < n; ++i) {
    if (!network_->Addressable(spikes[i].core, spikes[i].neuron)) {
      counted_.refused += n;
      return {Admission::kRefused, 0, DescribeBadSpike(i, spikes[i], config_)};
    }
  }
  if (!config_.unlimited && config_.ksps == 0) {
    counted_.refused += n;
    return {Admission::kRefused, 0,
            "this task reserved no spike budget (resources.ksps is 0); ask for ksps in the job"};
  }
  if (!bucket_.TryTake(n, now_us)) {
    if (first_try) counted_.throttled += n;
    return {Admission::kThrottled, std::max<int64_t>(1, bucket_.WaitUs(n, now_us)), ""};
  }
  network_->Inject(spikes, n);
  counted_.injected += n;
  return {};
}

uint32_t TaskSpikePlane::Step(uint32_t steps) {
  std::lock_guard lock(mu_);
  if (!closed_) network_->Step(steps);
  return network_->now_step();
}

size_t TaskSpikePlane::ReadOutput(wire::Spike* out, size_t max) {
  std::lock_guard lock(mu_);
  return closed_ ? 0 : network_->ReadOutput(out, max);
}

uint32_t TaskSpikePlane::now_step() const {
  std::lock_guard lock(mu_);
  return network_->now_step();
}

wire::UsageCounters TaskSpikePlane::Usage() const {
  std::lock_guard lock(mu_);
  wire::UsageCounters u = network_->counters();
  u.injected = counted_.injected;
  u.throttled = counted_.throttled;
  u.refused = counted_.refused;
  return u;
}

double TaskSpikePlane::RateKsps(int64_t now_us) {
  std::lock_guard lock(mu_);
  const int64_t elapsed = now_us - rate_window_us_;
  if (elapsed >= 1'000'000) {
    rate_ksps_ = static_cast<double>(counted_.injected - rate_window_injected_) * 1000.0 /
                 static_cast<double>(elapsed);
    rate_window_us_ = now_us;
    rate_window_injected_ = counted_.injected;
  }
  return rate_ksps_;
}

void TaskSpikePlane::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
}

bool TaskSpikePlane::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

bool TaskSpikePlane::TokenMatches(const std::string& token) const {
  if (token.size() != config_.token.size() || token.empty()) return false;
  unsigned char diff = 0;  // the same time whatever the first difference
  for (size_t i = 0; i < token.size(); ++i) diff |= token[i] ^ config_.token[i];
  return diff == 0;
}

}  // namespace snn
