#include "nodeagent/hal/network_builder.h"

namespace snn {

NetworkBuilder::NetworkBuilder(std::function<void()> wake) : wake_(std::move(wake)) {
  thread_ = std::thread([this] { Loop(); });
}

NetworkBuilder::~NetworkBuilder() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    jobs_.clear();
  }
  queued_.notify_all();
  thread_.join();
}

void NetworkBuilder::Start(TaskKey key, std::string token, NetworkBuild build) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(Job{key, std::move(token), std::move(build)});
  }
  queued_.notify_all();
}

std::vector<NetworkBuilder::Finished> NetworkBuilder::TakeFinished() {
  std::lock_guard lock(mu_);
  std::vector<Finished> out;
  out.swap(finished_);
  return out;
}

size_t NetworkBuilder::pending() const {
  std::lock_guard lock(mu_);
  return jobs_.size() + running_;
}

void NetworkBuilder::Loop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      queued_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++running_;
    }
    auto network = job.build();
    {
      std::lock_guard lock(mu_);
      --running_;
      finished_.push_back(Finished{job.key, std::move(job.token), std::move(network)});
    }
    wake_();
  }
}

}  // namespace snn
