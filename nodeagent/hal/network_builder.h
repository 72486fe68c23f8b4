// Builds tasks' networks off the agent's event loop: a large model takes seconds and much memory
// to expand, and an agent that stalls that long misses its master's heartbeats. One build runs
// at a time (each is bounded by its task's share of its board's memory, so the node's total is
// too); the agent collects finished ones from its io thread.
// Thread contract: Start, TakeFinished and the destructor from the agent's io thread; `wake` is
// called from the builder's thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nodeagent/hal/board.h"

namespace snn {

class NetworkBuilder {
 public:
  struct Finished {
    TaskKey key;
    std::string token;  // which launch of the task asked (its gateway token)
    Result<std::unique_ptr<SpikeNetwork>> network;
  };

  // `wake` is called after each build ends, so that the owner collects it soon.
  explicit NetworkBuilder(std::function<void()> wake);
  ~NetworkBuilder();  // waits for the build that runs; drops the rest
  NetworkBuilder(const NetworkBuilder&) = delete;
  NetworkBuilder& operator=(const NetworkBuilder&) = delete;

  void Start(TaskKey key, std::string token, NetworkBuild build);
  std::vector<Finished> TakeFinished();
  // Builds queued or running.
  size_t pending() const;

 private:
  struct Job {
    TaskKey key;
    std::string token;
    NetworkBuild build;
  };
  void Loop();

  const std::function<void()> wake_;
  mutable std::mutex mu_;
  std::condition_variable queued_;
  std::deque<Job> jobs_;            // guarded by mu_
  size_t running_ = 0;              // guarded by mu_
  std::vector<Finished> finished_;  // guarded by mu_
  bool stopping_ = false;           // guarded by mu_
  std::thread thread_;
};

}  // namespace snn
