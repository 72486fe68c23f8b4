// The node's board driver processes (docs/drivers.md), each called from a thread of its own, so
// that a board that takes a minute to boot, or a driver that hangs, never stalls the agent's
// event loop. The io thread queues a call with what to do with its answer; the answer comes
// back to the io thread at its next Poll (RunAnswers), which `wake` asks for. A driver that
// dies between calls is started again by its thread at once (after its back-off), not at the
// next call.
// Thread contract: Start and CallNow (start-up), then Serve, from one thread; after Serve,
// Call and RunAnswers from the agent's io thread; `wake` is called from the drivers' threads.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/base/clock.h"
#include "common/daemon/board_drivers.h"
#include "nodeagent/drivers/driver_process.h"

namespace snn {

class DriverPool {
 public:
  using Answer = std::function<void(Result<v1::DriverResponse>)>;

  // Each driver's output goes to `log_dir`/driver-NAME.log.
  DriverPool(const Clock& clock, const std::map<std::string, BoardDriverConfig>& drivers,
             const std::string& log_dir, std::string agent_name);
  ~DriverPool();

  // Starts every driver and greets it (blocking: agent start-up).
  Status Start();
  // From now on calls go through the drivers' threads; `wake` asks for a Poll.
  void Serve(std::function<void()> wake);
  const v1::DriverHelloReply& hello(const std::string& driver) const;
  const BoardDriverConfig& config(const std::string& driver) const;
  // Asks at once, blocking (start-up only: discovering the boards).
  Result<v1::DriverResponse> CallNow(const std::string& driver, v1::DriverRequest request);

  // Queues `request` for `driver`; `then` runs on the io thread with the answer.
  void Call(const std::string& driver, v1::DriverRequest request, Answer then);
  // Runs the answers that came since the last call (io thread).
  void RunAnswers();
  size_t drivers() const { return workers_.size(); }

 private:
  struct Job {
    v1::DriverRequest request;
    Answer then;
  };
  struct Worker {
    BoardDriverConfig config;
    std::unique_ptr<DriverProcess> process;
    std::deque<Job> jobs;  // guarded by mu_
    int wake_fd = -1;      // an eventfd: a job came, or the pool stops
    std::thread thread;
  };
  void Loop(Worker& worker);

  std::function<void()> wake_;  // set by Serve, before the threads start
  std::map<std::string, std::unique_ptr<Worker>> workers_;  // fixed after construction
  std::mutex mu_;
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::function<void()>> done_;  // guarded by mu_
};

}  // namespace snn
