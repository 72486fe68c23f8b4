// Runs the turns of experiment services (agent.run_experiments): a turn is one user's
// experiments on one task of a service. The runner places the service task's rectangle exactly
// (the master holds it for the service), resets the board when the turn before was another
// user's, then runs each experiment on a network built afresh: its inputs injected by
// population, stepped for its steps, its outputs read back by population. The board is paced in
// real time, as hardware runs: an experiment of N steps occupies the board N timesteps (longer
// if simulating takes longer), and that is the board time billed to its user.
// Turns of one service task run one after another, in the order they came, on a thread of the
// task's own (the agent's event loop never waits for an experiment); the cores are freed when
// no turn is queued.
// Thread contract: Run, Forget and the destructor on the agent's io thread; `done` is called
// there too.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/base/clock.h"
#include "common/base/status.h"
#include "common/rpc/asio.h"
#include "nodeagent/boards/task_boards.h"
#include "proto/experiment.pb.h"

namespace snn {

class ExperimentRunner {
 public:
  using Done = std::function<void(Result<v1::ExperimentBatchResponse>)>;
  // Output spikes one experiment may return (beyond, it fails, saying so), and what one turn's
  // answer may hold: experiments beyond it are not run, and the master queues them again.
  static constexpr size_t kMaxOutputs = 100'000;
  static constexpr size_t kMaxTurnBytes = 2u << 20;

  ExperimentRunner(asio::io_context& io, const Clock& clock, TaskBoards& boards);
  ~ExperimentRunner();  // waits for the experiments running; queued turns are dropped
  ExperimentRunner(const ExperimentRunner&) = delete;
  ExperimentRunner& operator=(const ExperimentRunner&) = delete;

  void Run(v1::ExperimentBatch batch, Done done);
  // The service task ended: its queued turns fail; its cores are freed after the running one.
  void Forget(const TaskKey& key);
  // Service tasks with a turn queued or running.
  size_t active() const { return slots_.size(); }

 private:
  struct Turn {
    v1::ExperimentBatch batch;
    Done done;
  };
  struct Slot;
  void StartNext(const TaskKey& key);
  void Finished(const TaskKey& key, Result<v1::ExperimentBatchResponse> result, Done done);

  asio::io_context& io_;
  const Clock& clock_;
  TaskBoards& boards_;
  std::map<TaskKey, std::unique_ptr<Slot>> slots_;  // io thread only
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// Runs one turn's experiments (prepared on the io thread) on the calling thread.
v1::ExperimentBatchResponse RunTurn(const Clock& clock, const v1::ExperimentBatch& batch,
                                    const std::vector<Result<NetworkBuild>>& builds,
                                    uint32_t neurons_per_core);

}  // namespace snn
