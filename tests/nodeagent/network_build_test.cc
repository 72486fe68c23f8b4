// A task's network is built off the thread that launches it (the agent's event loop): the task
// is held until it is built, fails to launch (its command never run) if it cannot be, and can
// be stopped meanwhile. The board's build waits on a gate the test opens.
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>

#include "common/base/clock.h"
#include "common/model/model.h"
#include "nodeagent/hal/sim_board.h"
#include "nodeagent/spikes/spike_gateway.h"
#include "nodeagent/tasks/task_manager.h"
#include "tests/nodeagent/task_manager_fixture.h"

namespace snn {
namespace {

// A simulated board whose builds wait until the test opens the gate, and may fail.
class GatedBoard : public SimBoard {
 public:
  struct Gate {
    std::mutex mu;
    std::condition_variable changed;
    bool open = false;
    bool fail = false;
  };
  GatedBoard(v1::BoardInfo info, Gate& gate) : SimBoard(std::move(info)), gate_(gate) {}

  Result<NetworkBuild> PrepareNetwork(const v1::Model* model, uint32_t num_cores) override {
    auto inner = SimBoard::PrepareNetwork(model, num_cores);
    if (!inner.ok()) return inner.status();
    return NetworkBuild([this, inner = *inner]() -> Result<std::unique_ptr<SpikeNetwork>> {
      std::unique_lock lock(gate_.mu);
      gate_.changed.wait(lock, [&] { return gate_.open; });
      if (gate_.fail) return InvalidArgument("the model needs 3 GiB; its share is 8 MiB");
      return inner();
    });
  }

 private:
  Gate& gate_;
};

class NetworkBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = std::filesystem::temp_directory_path() / "snn_build_XXXXXX";
    dir_ = mkdtemp(dir.data());
    gateway_ = std::make_unique<SpikeGateway>(clock_, dir_ + "/gateway.sock");
    ASSERT_TRUE(gateway_->Start().ok());
    auto boards = testing::OneSimBoard();
    v1::BoardInfo info = boards[0]->Describe();
    info.set_neurons_per_core(256);
    boards[0] = std::make_unique<GatedBoard>(info, gate_);
    tasks_ = std::make_unique<TaskManager>(clock_, std::move(boards), testing::AgentOptions(dir_),
                                           gateway_.get());
    TaskManager::Calls calls;
    calls.wake = [this] {
      std::lock_guard lock(gate_.mu);
      ++wakes_;
      gate_.changed.notify_all();
    };
    tasks_->set_calls(std::move(calls));
  }
  void TearDown() override {
    Open(false);
    tasks_->KillAll();
    EXPECT_TRUE(PollUntil([&] { return tasks_->active_count() == 0; }));
    tasks_.reset();
    gateway_->Stop();
    std::filesystem::remove_all(dir_);
  }

  v1::LaunchRequest Request() {
    v1::LaunchRequest req;
    req.set_job_id(7);
    req.set_tenant_job_id(1);
    req.set_tenant("alice");
    req.set_attempt(1);
    req.mutable_task()->set_command("/bin/sh");
    req.mutable_task()->add_args("-c");
    req.mutable_task()->add_args("touch " + dir_ + "/ran && exec sleep 600");
    auto* r = req.mutable_task()->mutable_resources();
    r->set_cores(2);
    r->set_ksps(100);
    r->set_streams(1);
    auto model = ParseModelJson(R"({"name": "pair", "timestep_ms": 1, "populations": [
        {"name": "in", "size": 4, "role": "input"}, {"name": "out", "size": 4, "role": "output"}],
      "projections": [{"from": "in", "to": "out", "connectivity": "one_to_one", "weight": 2}]})");
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    *req.mutable_task()->mutable_network() = *model;
    return req;
  }
  void Open(bool fail) {
    std::lock_guard lock(gate_.mu);
    gate_.open = true;
    gate_.fail = fail;
    gate_.changed.notify_all();
  }
  // Waits (bounded, real time) until a build ended and the builder said so.
  bool BuiltAndWoken() {
    std::unique_lock lock(gate_.mu);
    return gate_.changed.wait_for(lock, std::chrono::seconds(30), [&] { return wakes_ > 0; });
  }
  bool PollUntil(const std::function<bool()>& done) {
    const RealDeadline deadline(30000);
    while (!deadline.passed()) {
      tasks_->Poll();
      if (done()) return true;
      SleepRealMs(5);
    }
    return false;
  }
  bool Ran() { return std::filesystem::exists(dir_ + "/ran"); }

  ManualClock clock_;
  std::string dir_;
  GatedBoard::Gate gate_;
  int wakes_ = 0;  // guarded by gate_.mu
  std::unique_ptr<SpikeGateway> gateway_;
  std::unique_ptr<TaskManager> tasks_;
};

TEST_F(NetworkBuildTest, ATaskWaitsForItsNetworkWhichIsBuiltOffTheLaunchingThread) {
  // The build cannot end before the gate opens: Launch returning at all shows it did not wait.
  auto launched = tasks_->Launch(Request());
  ASSERT_TRUE(launched.ok()) << launched.status().ToString();
  EXPECT_EQ(launched->state(), v1::TASK_RUNNING);
  tasks_->Poll();
  EXPECT_FALSE(Ran()) << "the command ran before its network existed";
  EXPECT_EQ(gateway_->Find(TaskKey{7, 0, 1}), nullptr);

  Open(false);
  ASSERT_TRUE(BuiltAndWoken()) << "the builder never said it was done";
  ASSERT_TRUE(PollUntil([&] { return Ran(); })) << "the task never started";
  EXPECT_NE(gateway_->Find(TaskKey{7, 0, 1}), nullptr) << "its plane is not open";
  EXPECT_EQ(tasks_->active_count(), 1u);
}

TEST_F(NetworkBuildTest, ANetworkThatCannotBeBuiltFailsTheLaunchAndTheCommandNeverRuns) {
  ASSERT_TRUE(tasks_->Launch(Request()).ok());
  Open(true);
  ASSERT_TRUE(BuiltAndWoken());
  ASSERT_TRUE(PollUntil([&] { return tasks_->active_count() == 0; }));
  auto ended = tasks_->EndedUnacknowledged();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].state(), v1::TASK_LAUNCH_FAILED);
  EXPECT_EQ(ended[0].detail(),
            "cannot load the network: the model needs 3 GiB; its share is 8 MiB");
  EXPECT_FALSE(Ran());
  EXPECT_EQ(gateway_->Find(TaskKey{7, 0, 1}), nullptr);
}

TEST_F(NetworkBuildTest, ATaskStoppedWhileItsNetworkIsBuiltEndsAsStoppedAndNeverRuns) {
  ASSERT_TRUE(tasks_->Launch(Request()).ok());
  tasks_->Kill(TaskKey{7, 0, 1}, "cancelled by alice");
  ASSERT_TRUE(PollUntil([&] { return tasks_->active_count() == 0; }));
  Open(false);
  ASSERT_TRUE(BuiltAndWoken());
  tasks_->Poll();  // the late network finds its task gone
  auto ended = tasks_->EndedUnacknowledged();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].state(), v1::TASK_KILLED);
  EXPECT_EQ(ended[0].detail(), "cancelled by alice");
  EXPECT_FALSE(Ran());
  EXPECT_EQ(gateway_->Find(TaskKey{7, 0, 1}), nullptr);
}

}  // namespace
}  // namespace snn
