// snn-driver-sim: the driver of simulated boards (drivers/sim/sim_driver.h). The agent starts
// it with its connection on fd 3.
#include <gflags/gflags.h>

#include <filesystem>
#include <iostream>

#include "common/daemon/program_flags.h"
#include "drivers/sim/sim_driver.h"

DEFINE_uint32(boards, 1, "how many simulated boards (ids sim0, sim1, ...)");
DEFINE_string(type, "sim-v1", "their board type");
DEFINE_uint32(width, 8, "mesh width");
DEFINE_uint32(height, 8, "mesh height");
DEFINE_uint32(neurons_per_core, 256, "neurons per core");
DEFINE_uint32(ksps, 1000, "capacity, thousands of spikes a second");
DEFINE_string(state_dir, "", "where the boards' power, firmware and memory are kept");

int main(int argc, char** argv) {
  snn::ParseProgramFlags(&argc, &argv, "snn-driver-sim --state_dir=DIR [--boards=N] (fd 3)");
  if (FLAGS_state_dir.empty() || FLAGS_boards == 0 || FLAGS_boards > 1024) {
    std::cerr << "snn-driver-sim: --state_dir is needed, and --boards from 1 to 1024\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(FLAGS_state_dir, ec);
  if (ec) {
    std::cerr << "snn-driver-sim: --state_dir " << FLAGS_state_dir << ": " << ec.message() << "\n";
    return 2;
  }
  snn::SimDriverConfig config;
  config.boards = FLAGS_boards;
  config.type = FLAGS_type;
  config.width = FLAGS_width;
  config.height = FLAGS_height;
  config.neurons_per_core = FLAGS_neurons_per_core;
  config.ksps = FLAGS_ksps;
  config.state_dir = FLAGS_state_dir;
  snn::SimDriver driver(config);
  return snn::ServeDriver(driver);
}
