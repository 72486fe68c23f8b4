#include "nodeagent/experiments/experiment_runner.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/model/model_addresses.h"

namespace snn {

// One service task's turns: those waiting, and the thread that runs them one at a time.
struct ExperimentRunner::Slot {
  std::deque<Turn> waiting;  // io thread only, like the flags below
  bool running = false;
  bool placed = false;
  bool forgotten = false;
  uint32_t board = 0;
  std::string last_user;  // whose turn ran last on these cores ("" : none yet)

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> work;  // guarded by mu
  bool stop = false;                       // guarded by mu
  std::thread thread;

  Slot() {
    thread = std::thread([this] {
      for (;;) {
        std::function<void()> next;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return stop || !work.empty(); });
          if (work.empty()) return;
          next = std::move(work.front());
          work.pop_front();
        }
        next();
      }
    });
  }
  ~Slot() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
      work.clear();
    }
    cv.notify_all();
    thread.join();
  }
  void Post(std::function<void()> f) {
    {
      std::lock_guard<std::mutex> lock(mu);
      work.push_back(std::move(f));
    }
    cv.notify_all();
  }
};

ExperimentRunner::ExperimentRunner(asio::io_context& io, const Clock& clock, TaskBoards& boards)
    : io_(io), clock_(clock), boards_(boards) {}

ExperimentRunner::~ExperimentRunner() {
  *alive_ = false;
  slots_.clear();
}

void ExperimentRunner::Run(v1::ExperimentBatch batch, Done done) {
  const TaskKey key{batch.job_id(), batch.index(), batch.attempt()};
  auto& slot = slots_[key];
  if (!slot) slot = std::make_unique<Slot>();
  if (slot->forgotten) return done(FailedPrecondition("the service's task has ended"));
  slot->waiting.push_back({std::move(batch), std::move(done)});
  if (!slot->running) StartNext(key);
}

void ExperimentRunner::Forget(const TaskKey& key) {
  auto it = slots_.find(key);
  if (it == slots_.end()) return;
  Slot& slot = *it->second;
  slot.forgotten = true;
  std::deque<Turn> dropped = std::move(slot.waiting);
  slot.waiting.clear();
  for (auto& turn : dropped) turn.done(FailedPrecondition("the service's task has ended"));
  if (!slot.running) {
    if (slot.placed) boards_.Release(slot.board, key);
    slots_.erase(key);
  }
}

void ExperimentRunner::StartNext(const TaskKey& key) {
  Slot& slot = *slots_.at(key);
  while (!slot.waiting.empty()) {
    Turn turn = std::move(slot.waiting.front());
    slot.waiting.pop_front();
    const v1::ExperimentBatch& batch = turn.batch;
    if (slot.placed && slot.board != batch.board()) {
      boards_.Release(slot.board, key);
      slot.placed = false;
    }
    if (!slot.placed) {
      auto mapping = boards_.Place(batch.board(), key, batch.resources(), &batch.rect(), true);
      if (!mapping.ok()) {
        turn.done(mapping.status());
        continue;
      }
      slot.placed = true;
      slot.board = batch.board();
    }
    Board* board = boards_.board(batch.board());
    v1::ExperimentBatchResponse reset_only;
    if (slot.last_user != batch.tenant() + "/" + batch.user()) {
      // Nothing of another user's turn may remain for this one to see.
      if (Status reset = board->Reset(key); !reset.ok()) {
        turn.done(FailedPrecondition("the board could not be reset: " + reset.message()));
        continue;
      }
      reset_only.set_reset(true);
    }
    slot.last_user = batch.tenant() + "/" + batch.user();
    std::vector<Result<NetworkBuild>> builds;
    for (const auto& run : batch.runs()) {
      builds.push_back(board->PrepareNetwork(&run.spec().model(), batch.resources().cores()));
    }
    const uint32_t npc = board->Describe().neurons_per_core();
    slot.running = true;
    std::weak_ptr<bool> alive = alive_;
    slot.Post([this, alive, key, npc, reset = reset_only.reset(), builds = std::move(builds),
               turn = std::make_shared<Turn>(std::move(turn))]() mutable {
      v1::ExperimentBatchResponse response = RunTurn(clock_, turn->batch, builds, npc);
      response.set_reset(reset);
      asio::post(io_, [this, alive, key, response = std::move(response), turn]() mutable {
        if (alive.expired() || !*alive.lock()) return;
        Finished(key, std::move(response), std::move(turn->done));
      });
    });
    return;
  }
  // Nothing queued: the cores go back until the next turn (the master still holds them).
  if (slot.placed) boards_.Release(slot.board, key);
  slot.placed = false;
  if (slot.forgotten) slots_.erase(key);
}

void ExperimentRunner::Finished(const TaskKey& key, Result<v1::ExperimentBatchResponse> result,
                                Done done) {
  auto it = slots_.find(key);
  if (it == slots_.end()) return;
  it->second->running = false;
  done(std::move(result));
  StartNext(key);
}

namespace {

v1::ExperimentResult RunOne(const Clock& clock, const v1::ExperimentRun& run,
                            const Result<NetworkBuild>& build, uint32_t neurons_per_core) {
  v1::ExperimentResult result;
  result.set_id(run.id());
  const v1::ExperimentSpec& spec = run.spec();
  auto fail = [&](const std::string& why) {
    result.set_error(why);
    result.set_start_us(clock.NowUs());
    result.set_end_us(result.start_us());
    return result;
  };
  if (!build.ok()) return fail(build.status().message());
  auto network = (*build)();
  if (!network.ok()) return fail(network.status().message());
  const ModelAddresses addresses(spec.model(), neurons_per_core);
  std::vector<wire::Spike> inputs;
  inputs.reserve(spec.inputs_size());
  for (const auto& in : spec.inputs()) {
    auto address = addresses.Of(in.population(), in.neuron());
    if (!address.ok()) return fail("input: " + address.status().message());
    address->step = in.step();
    inputs.push_back(*address);
  }
  const double timestep_ms = spec.model().has_timestep_ms() ? spec.model().timestep_ms() : 1.0;
  const int64_t paced_us = std::llround(spec.steps() * timestep_ms * 1000.0);
  const int64_t start = clock.NowUs();
  result.set_start_us(start);
  (*network)->Inject(inputs.data(), inputs.size());
  (*network)->Step(spec.steps());
  std::vector<wire::Spike> out(4096);
  for (size_t n; (n = (*network)->ReadOutput(out.data(), out.size())) > 0;) {
    for (size_t i = 0; i < n; ++i) {
      v1::NamedSpike* spike = result.add_outputs();
      uint32_t index = 0;
      if (!addresses.NameOf(out[i].core, out[i].neuron, spike->mutable_population(), &index)) {
        spike->set_population("?");
      }
      spike->set_neuron(index);
      spike->set_step(out[i].step);
    }
    if (static_cast<size_t>(result.outputs_size()) > ExperimentRunner::kMaxOutputs) {
      result.clear_outputs();
      return fail("it produced more than " + std::to_string(ExperimentRunner::kMaxOutputs) +
                  " output spikes (the most an experiment returns)");
    }
  }
  // The board runs in real time: the experiment holds it for its steps.
  const int64_t left = start + paced_us - clock.NowUs();
  if (left > 0) clock.SleepUs(left);
  result.set_end_us(clock.NowUs());
  result.set_board_us(result.end_us() - start);
  return result;
}

}  // namespace

v1::ExperimentBatchResponse RunTurn(const Clock& clock, const v1::ExperimentBatch& batch,
                                    const std::vector<Result<NetworkBuild>>& builds,
                                    uint32_t neurons_per_core) {
  v1::ExperimentBatchResponse response;
  size_t bytes = 0;
  for (int i = 0; i < batch.runs_size() && bytes < ExperimentRunner::kMaxTurnBytes; ++i) {
    v1::ExperimentResult* result = response.add_results();
    *result = RunOne(clock, batch.runs(i), builds[i], neurons_per_core);
    bytes += result->ByteSizeLong();
  }
  return response;
}

}  // namespace snn
