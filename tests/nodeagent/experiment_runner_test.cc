// The agent's side of experiment services (issue 37): turns run on the service task's exact
// rectangle, in order, each experiment on a fresh network paced in real time; the board is reset
// when the user changes, not between two turns of one user; a bad experiment fails alone; the
// cores are free once no turn is queued.
#include "nodeagent/experiments/experiment_runner.h"

#include <gtest/gtest.h>

#include "nodeagent/hal/sim_board.h"

namespace snn {
namespace {

class ExperimentRunnerTest : public ::testing::Test {
 protected:
  ExperimentRunnerTest() {
    v1::BoardInfo info;
    info.set_type("sim-v1");
    info.set_width(4);
    info.set_height(4);
    info.set_ksps(1000);
    info.set_streams(4);
    info.set_neurons_per_core(16);
    auto board = std::make_unique<SimBoard>(info);
    sim_ = board.get();
    std::vector<std::unique_ptr<Board>> boards;
    boards.push_back(std::move(board));
    boards_ = std::make_unique<TaskBoards>(std::move(boards));
    runner_ = std::make_unique<ExperimentRunner>(io_, clock_, *boards_);
  }

  // A turn of `user`: experiments of a relay (in -> out, one to one) fed neuron `neuron`.
  v1::ExperimentBatch Turn(const std::string& user, std::vector<uint32_t> neurons) {
    v1::ExperimentBatch turn;
    turn.set_job_id(40);
    turn.set_index(0);
    turn.set_attempt(1);
    turn.set_board(0);
    turn.mutable_rect()->set_x(2);
    turn.mutable_rect()->set_y(2);
    turn.mutable_rect()->set_width(2);
    turn.mutable_rect()->set_height(2);
    turn.mutable_resources()->set_cores(4);
    turn.mutable_resources()->set_ksps(100);
    turn.set_tenant("lab");
    turn.set_user(user);
    for (uint32_t neuron : neurons) {
      v1::ExperimentRun* run = turn.add_runs();
      run->set_id(turn.runs_size());
      v1::Model& m = *run->mutable_spec()->mutable_model();
      m.set_timestep_ms(1);
      for (const char* name : {"in", "out"}) {
        v1::Population* p = m.add_populations();
        p->set_name(name);
        p->set_size(4);
        p->set_role(std::string(name) == "in" ? "input" : "output");
        p->mutable_neuron()->set_tau_m_ms(20);
        p->mutable_neuron()->set_v_threshold(1);
        p->mutable_neuron()->set_refractory_ms(2);
      }
      v1::Projection* proj = m.add_projections();
      proj->set_from("in");
      proj->set_to("out");
      proj->set_connectivity("one_to_one");
      proj->set_weight(1.5);
      proj->set_delay_steps(1);
      run->mutable_spec()->set_steps(3);
      v1::NamedSpike* in = run->mutable_spec()->add_inputs();
      in->set_population("in");
      in->set_neuron(neuron);
    }
    return turn;
  }

  // Runs `turns` (queued together) and returns their answers, in order.
  std::vector<Result<v1::ExperimentBatchResponse>> RunAll(std::vector<v1::ExperimentBatch> turns) {
    std::vector<Result<v1::ExperimentBatchResponse>> answers;
    for (auto& turn : turns) {
      runner_->Run(std::move(turn),
                   [&](Result<v1::ExperimentBatchResponse> r) { answers.push_back(std::move(r)); });
    }
    while (answers.size() < turns.size()) io_.run_one();
    return answers;
  }

  asio::io_context io_;
  // run_one waits for the turns' answers, which the runner's thread posts.
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  SystemClock clock_;  // the board is paced in real time; nothing asserts how long it took
  SimBoard* sim_ = nullptr;
  std::unique_ptr<TaskBoards> boards_;
  std::unique_ptr<ExperimentRunner> runner_;
};

TEST_F(ExperimentRunnerTest, TurnsRunInOrderOnTheTasksRectangleAndResetOnlyBetweenUsers) {
  auto answers = RunAll({Turn("ann", {0, 3}), Turn("ann", {1}), Turn("bob", {2})});
  ASSERT_EQ(answers.size(), 3u);
  for (const auto& a : answers) ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(answers[0]->reset());   // the first turn on these cores
  EXPECT_FALSE(answers[1]->reset());  // ann again
  EXPECT_TRUE(answers[2]->reset());   // bob after ann
  EXPECT_EQ(sim_->resets(), 2u);
  // Each experiment's input fires its `in` neuron at step 0; its `out` twin fires a step later.
  const std::vector<std::pair<size_t, uint32_t>> expected = {{0, 0}, {0, 3}, {1, 1}, {2, 2}};
  size_t i = 0;
  for (size_t t = 0; t < answers.size(); ++t) {
    for (const auto& r : answers[t]->results()) {
      ASSERT_LT(i, expected.size());
      EXPECT_EQ(t, expected[i].first);
      EXPECT_TRUE(r.error().empty()) << r.error();
      ASSERT_EQ(r.outputs_size(), 1);
      EXPECT_EQ(r.outputs(0).population(), "out");
      EXPECT_EQ(r.outputs(0).neuron(), expected[i].second);
      EXPECT_EQ(r.outputs(0).step(), 1u);
      EXPECT_GE(r.board_us(), 3000);  // 3 steps of 1 ms: the board runs in real time
      EXPECT_EQ(r.end_us() - r.start_us(), r.board_us());
      ++i;
    }
  }
  EXPECT_EQ(i, expected.size());
  // Nothing queued: the cores are free again.
  for (uint32_t x = 0; x < 4; ++x) {
    for (uint32_t y = 0; y < 4; ++y) EXPECT_EQ(sim_->Owner(x, y), nullptr) << x << "," << y;
  }
}

TEST_F(ExperimentRunnerTest, ABadExperimentFailsAloneAndAnOccupiedRectangleFailsTheTurn) {
  v1::ExperimentBatch turn = Turn("ann", {0, 1});
  turn.mutable_runs(0)->mutable_spec()->mutable_inputs(0)->set_population("hidden");
  auto answers = RunAll({turn});
  ASSERT_TRUE(answers[0].ok());
  EXPECT_EQ(answers[0]->results(0).error(),
            "input: the model has no population 'hidden' (it has in (4), out (4))");
  EXPECT_TRUE(answers[0]->results(1).error().empty());
  // Another task holds the rectangle: the turn is refused, saying so.
  ASSERT_TRUE(
      boards_->Place(0, TaskKey{9, 0, 1}, Turn("x", {}).resources(), &turn.rect(), true).ok());
  auto refused = RunAll({Turn("ann", {0})});
  ASSERT_FALSE(refused[0].ok());
}

TEST_F(ExperimentRunnerTest, AForgottenServiceFailsItsQueuedTurns) {
  std::vector<Result<v1::ExperimentBatchResponse>> answers;
  for (int i = 0; i < 3; ++i) {
    runner_->Run(Turn("ann", {0}),
                 [&](Result<v1::ExperimentBatchResponse> r) { answers.push_back(std::move(r)); });
  }
  runner_->Forget(TaskKey{40, 0, 1});
  ASSERT_EQ(answers.size(), 2u);  // the two waiting, at once
  for (const auto& a : answers) EXPECT_EQ(a.status().message(), "the service's task has ended");
  while (answers.size() < 3) io_.run_one();  // the running one ends as it was
  EXPECT_TRUE(answers[2].ok());
  EXPECT_EQ(runner_->active(), 0u);
  EXPECT_EQ(sim_->Owner(2, 2), nullptr);
}

}  // namespace
}  // namespace snn
