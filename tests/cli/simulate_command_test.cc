// snnctl simulate, in process: a model with NIR dynamics run from an inputs file writes its
// output spikes and values; bad inputs get one line naming the file, the line and what is wrong,
// and write nothing.
#include "cli/simulate_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace snn {
namespace {

class SimulateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("simulate_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    // in (2) -> b (IF, threshold 0.5) spikes; in -> li (LI, tau 2 ms, r 2) gives values.
    std::ofstream(dir_ + "/model.json") << R"({"name": "t", "dynamics": "nir",
      "populations": [
        {"name": "in", "size": 2, "role": "input", "nir": {"kind": "Input"}},
        {"name": "b", "size": 2, "role": "output", "nir": {"kind": "IF", "v_threshold": [0.5]}},
        {"name": "li", "size": 1, "role": "output", "nir": {"kind": "LI", "tau": [0.002],
         "r": [2]}}],
      "projections": [
        {"from": "in", "to": "b", "connectivity": "stages", "stages": [{"kind": "dense",
         "in_shape": [2], "out_shape": [2], "weights": [1, 0, 0, 1]}]},
        {"from": "in", "to": "li", "connectivity": "stages", "stages": [{"kind": "dense",
         "in_shape": [2], "out_shape": [1], "weights": [1, 1]}]}]})";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  int Simulate(const std::string& inputs, std::vector<std::string> extra = {}) {
    std::ofstream(dir_ + "/in.csv") << inputs;
    CliOptions o;
    o.args = {"simulate", dir_ + "/model.json"};
    o.inputs_file = dir_ + "/in.csv";
    o.steps = 4;
    o.out_dir = dir_ + "/out.csv";
    for (const auto& e : extra) {
      if (e == "--dt") o.step_ms = 0.5;
    }
    out_.str("");
    err_.str("");
    return snn::Simulate(o, out_, err_);
  }
  std::string Output() {
    std::ifstream in(dir_ + "/out.csv");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string dir_;
  std::ostringstream out_, err_;
};

TEST_F(SimulateTest, WritesOutputSpikesAndValuesStepByStep) {
  ASSERT_EQ(Simulate("step,layer,neuron\n1,in,0\n# a comment\n2,in,1\n"), 0) << err_.str();
  // li: v = 0.5 x 2 x 1 = 1 at step 1, then 1 + 0.5 (2 - 1) = 1.5 at 2, 0.75 at 3.
  EXPECT_EQ(Output(),
            "step,layer,neuron,value\n1,b,0,1\n1,li,0,1\n2,b,1,1\n2,li,0,1.5\n3,li,0,0.75\n");
  EXPECT_NE(out_.str().find("Simulated 4 steps of 1 ms (NIR dynamics): 4 spikes in all"),
            std::string::npos)
      << out_.str();
}

TEST_F(SimulateTest, BadInputsAreOneLineAndWriteNothing) {
  const struct {
    const char* inputs;
    const char* error;
  } cases[] = {
      {"1,hidden,0\n", "in.csv line 1: 'hidden' is not an input layer (the model's: in)"},
      {"0,in,0\n1,in,2\n", "in.csv line 2: input 'in' has 2 neurons, not 3"},
      {"1;in;0\n", "in.csv line 1: '1;in;0' is not step,layer,neuron"},
      {"x,in,0\n", "in.csv line 1: 'x,in,0': step and neuron must be whole numbers"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.inputs);
    std::filesystem::remove(dir_ + "/out.csv");
    EXPECT_NE(Simulate(c.inputs), 0);
    EXPECT_NE(err_.str().find(c.error), std::string::npos) << err_.str();
    const std::string err = err_.str();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/out.csv"));
  }
  // A JSON model gives its own step.
  EXPECT_NE(Simulate("0,in,0\n", {"--dt"}), 0);
  EXPECT_NE(err_.str().find("--dt is for NIR models"), std::string::npos) << err_.str();
}

}  // namespace
}  // namespace snn
