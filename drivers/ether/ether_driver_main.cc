// snn-driver-ether: the reference driver for Ethernet-attached boards (drivers/ether/
// ether_driver.h). The agent starts it with its connection on fd 3.
#include <gflags/gflags.h>

#include <iostream>

#include "common/base/clock.h"
#include "common/daemon/program_flags.h"
#include "drivers/ether/ether_driver.h"

DEFINE_string(boards, "", "the boards file (ids, management and data endpoints, attributes)");
DEFINE_int64(boot_timeout_s, 120, "how long a board may take to boot");
DEFINE_string(board_type, "ether-v1",
              "the type its boards have (what job files ask for): one per kind of board, where a "
              "site has more than one");

int main(int argc, char** argv) {
  snn::ParseProgramFlags(&argc, &argv, "snn-driver-ether --boards=FILE (fd 3: the agent)");
  auto boards = snn::LoadEtherBoards(FLAGS_boards);
  if (!boards.ok()) {
    std::cerr << "snn-driver-ether: " << boards.status().message() << "\n";
    return 2;
  }
  snn::SystemClock clock;
  snn::EtherDriver driver(std::move(boards).value(), clock, FLAGS_boot_timeout_s * 1000,
                          FLAGS_board_type);
  return snn::ServeDriver(driver);
}
