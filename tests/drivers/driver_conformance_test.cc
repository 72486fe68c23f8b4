// The conformance suite every board driver must pass (docs/drivers.md), run here against the
// simulated boards' driver and the Ethernet reference driver (on snn-board-emu processes on
// their own loopback addresses): greeting, discovery, power, boot, health (and a failing check
// in the board's own words), reserve, a reset that leaves nothing of the last tenant, stats,
// and a driver SIGKILLed and started again with its boards as they were.
// A vendor's driver joins by adding a DriverKind: how to start it, and how a task writes and
// reads its boards' state through what Reserve hands over.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

#include "common/base/clock.h"
#include "drivers/ether/udp_exchange.h"
#include "nodeagent/drivers/driver_process.h"
#include "snn_paths.h"
#include "tests/test_util/process.h"

namespace snn {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What the suite needs to know of one kind of driver.
struct DriverKind {
  std::string name;
  // Starts what its boards need under `dir`; the driver's command line. Pids to kill after.
  std::function<std::vector<std::string>(const std::string& dir, std::vector<pid_t>* started)>
      setup;
  // A task's view of its board's state, through what Reserve handed over.
  std::function<void(const v1::DriverReservation&, const std::string& key,
                     const std::string& value)>
      write_state;
  std::function<std::string(const v1::DriverReservation&, const std::string& key)> read_state;
  // Makes the board's next health checks fail with `reason` (as broken hardware would).
  std::function<void(const std::string& dir, const std::string& board, const std::string& reason)>
      break_board;
};

HostPort DataEndpoint(const v1::DriverReservation& r) {
  auto address = ParseHostPort(r.endpoints(0));
  EXPECT_TRUE(address.ok()) << r.endpoints(0);
  return *address;
}

DriverKind SimKind() {
  DriverKind k;
  k.name = "sim";
  k.setup = [](const std::string& dir, std::vector<pid_t>*) {
    return std::vector<std::string>{SNN_DRIVER_SIM_BIN, "--boards=2",
                                    "--state_dir=" + dir + "/sim"};
  };
  k.write_state = [](const v1::DriverReservation& r, const std::string& key,
                     const std::string& value) {
    std::ofstream(r.env().at("SNN_SIM_BOARD_MEMORY"), std::ios::app) << key << "=" << value << "\n";
  };
  k.read_state = [](const v1::DriverReservation& r, const std::string& key) {
    std::istringstream in(Slurp(r.env().at("SNN_SIM_BOARD_MEMORY")));
    std::string line, found = "none";
    while (std::getline(in, line)) {
      if (line.rfind(key + "=", 0) == 0) found = line.substr(key.size() + 1);
    }
    return found;
  };
  k.break_board = [](const std::string& dir, const std::string& board, const std::string& why) {
    std::ofstream(dir + "/sim/" + board + ".fault") << why << "\n";
  };
  return k;
}

DriverKind EtherKind() {
  DriverKind k;
  k.name = "ether";
  k.setup = [](const std::string& dir, std::vector<pid_t>* started) {
    std::ofstream boards(dir + "/boards.yaml");
    boards << "boards:\n";
    for (int i = 0; i < 2; ++i) {
      const std::string address = "127.0.0." + std::to_string(2 + i);
      const std::string ports = dir + "/emu" + std::to_string(i) + ".ports";
      started->push_back(
          testing::SpawnLogged({SNN_BOARD_EMU_BIN, "--address=" + address, "--port_file=" + ports,
                                "--boot_ms=50", "--serial=emu-" + std::to_string(i)},
                               dir + "/emu.log", dir + "/emu.log"));
      const RealDeadline deadline(30000);
      while (!std::filesystem::exists(ports) && !deadline.passed()) SleepRealMs(5);
      std::istringstream in(Slurp(ports));
      int mgmt = 0, data = 0;
      in >> mgmt >> data;
      boards << "  - id: eth" << i << "\n    management: " << address << ":" << mgmt
             << "\n    data: " << address << ":" << data
             << "\n    firmware: fw-2.4\n    attributes: {rev: \"3\"}\n";
    }
    return std::vector<std::string>{SNN_DRIVER_ETHER_BIN, "--boards=" + dir + "/boards.yaml"};
  };
  k.write_state = [](const v1::DriverReservation& r, const std::string& key,
                     const std::string& value) {
    auto answer = UdpExchange(DataEndpoint(r), "LOAD " + key + " " + value);
    EXPECT_TRUE(answer.ok() && *answer == "loaded");
  };
  k.read_state = [](const v1::DriverReservation& r, const std::string& key) {
    auto answer = UdpExchange(DataEndpoint(r), "READ " + key);
    return answer.ok() ? *answer : "(no answer: " + answer.status().message() + ")";
  };
  k.break_board = [](const std::string& dir, const std::string& board, const std::string& why) {
    std::istringstream in(Slurp(dir + "/emu" + board.substr(3) + ".ports"));
    int mgmt = 0;
    in >> mgmt;
    auto answer = UdpExchange(HostPort{"127.0.0." + std::to_string(2 + std::stoi(board.substr(3))),
                                       static_cast<uint16_t>(mgmt)},
                              "FAULT " + why);
    EXPECT_TRUE(answer.ok());
  };
  return k;
}

class DriverConformanceTest : public ::testing::TestWithParam<DriverKind> {
 protected:
  void SetUp() override {
    std::string dir = std::filesystem::temp_directory_path() / "snn_driver_XXXXXX";
    dir_ = mkdtemp(dir.data());
    DriverProcessOptions options;
    options.argv = GetParam().setup(dir_, &started_);
    options.log_file = dir_ + "/driver.log";
    options.call_timeout_ms = 60000;
    driver_ = std::make_unique<DriverProcess>(clock_, options);
    ASSERT_TRUE(driver_->Start().ok()) << Slurp(dir_ + "/driver.log");
    auto boards = Discover();
    ASSERT_EQ(boards.boards_size(), 2);
    board_ = boards.boards(0).state().id();
  }
  void TearDown() override {
    driver_.reset();
    for (pid_t pid : started_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    std::filesystem::remove_all(dir_);
  }

  Result<v1::DriverResponse> Ask(v1::DriverRequest request, const std::string& board = "") {
    request.set_board(board.empty() ? board_ : board);
    return driver_->Call(std::move(request));
  }
  v1::DriverDiscoverReply Discover() {
    v1::DriverRequest r;
    r.mutable_discover();
    auto answer = driver_->Call(r);
    EXPECT_TRUE(answer.ok()) << answer.status().ToString();
    return answer.ok() ? answer->discover() : v1::DriverDiscoverReply();
  }
  v1::BoardPower PowerOf(const std::string& board) {
    const auto discovered = Discover();
    for (const auto& b : discovered.boards()) {
      if (b.state().id() == board) return b.state().power();
    }
    return v1::BOARD_POWER_UNSPECIFIED;
  }
  Result<v1::DriverResponse> Boot() {
    v1::DriverRequest r;
    r.mutable_boot();
    return Ask(r);
  }
  Result<v1::DriverReservation> Reserve(const std::string& task) {
    v1::DriverRequest r;
    r.mutable_reserve()->set_task(task);
    r.mutable_reserve()->set_uid(getuid());
    r.mutable_reserve()->set_gid(getgid());
    auto answer = Ask(r);
    if (!answer.ok()) return answer.status();
    return answer->reservation();
  }
  Status Release(const std::string& task) {
    v1::DriverRequest r;
    r.mutable_release()->set_task(task);
    return Ask(r).status();
  }
  v1::DriverHealthReply Health() {
    v1::DriverRequest r;
    r.mutable_health_check();
    auto answer = Ask(r);
    EXPECT_TRUE(answer.ok()) << answer.status().ToString();
    return answer.ok() ? answer->health() : v1::DriverHealthReply();
  }

  SystemClock clock_;
  std::string dir_;
  std::vector<pid_t> started_;
  std::unique_ptr<DriverProcess> driver_;
  std::string board_;
};

TEST_P(DriverConformanceTest, GreetsWithItsVersionAndDescribesItsBoards) {
  EXPECT_EQ(driver_->hello().protocol_version(), 1u);
  EXPECT_FALSE(driver_->hello().board_type().empty());
  EXPECT_FALSE(driver_->hello().driver().empty());
  const auto discovered = Discover();
  for (const auto& b : discovered.boards()) {
    EXPECT_FALSE(b.state().id().empty());
    EXPECT_NE(b.state().power(), v1::BOARD_POWER_UNSPECIFIED) << b.state().id();
    EXPECT_FALSE(b.attributes().empty()) << "no attributes for " << b.state().id();
    if (driver_->hello().pass_through()) {
      EXPECT_FALSE(b.endpoints().empty()) << "a pass-through board needs its endpoints";
    } else {
      EXPECT_GT(b.width() * b.height(), 0u) << "a managed board needs its mesh";
    }
  }
}

TEST_P(DriverConformanceTest, PowersOnAndOff) {
  v1::DriverRequest on;
  on.mutable_power()->set_on(true);
  auto powered = Ask(on);
  ASSERT_TRUE(powered.ok()) << powered.status().ToString();
  EXPECT_NE(powered->state().power(), v1::BOARD_OFF);
  v1::DriverRequest off;
  off.mutable_power()->set_on(false);
  auto down = Ask(off);
  ASSERT_TRUE(down.ok()) << down.status().ToString();
  EXPECT_EQ(down->state().power(), v1::BOARD_OFF);
  EXPECT_EQ(PowerOf(board_), v1::BOARD_OFF);
  EXPECT_FALSE(Health().healthy()) << "a board that is off passed its health check";
}

TEST_P(DriverConformanceTest, BootsIntoAHealthyBoardAndSaysHowLongItTook) {
  auto booted = Boot();
  ASSERT_TRUE(booted.ok()) << booted.status().ToString();
  EXPECT_EQ(booted->state().power(), v1::BOARD_BOOTED);
  EXPECT_FALSE(booted->state().firmware().empty());
  EXPECT_GE(booted->state().boot_ms(), 0);
  EXPECT_EQ(PowerOf(board_), v1::BOARD_BOOTED);
  const auto health = Health();
  EXPECT_TRUE(health.healthy()) << health.output();
}

TEST_P(DriverConformanceTest, AReservationIsRefusedOnABoardThatIsNotBooted) {
  v1::DriverRequest off;
  off.mutable_power()->set_on(false);
  ASSERT_TRUE(Ask(off).ok());
  auto reserved = Reserve("lab-a.job1.task0.try1");
  ASSERT_FALSE(reserved.ok());
  EXPECT_NE(reserved.status().message().find("not booted"), std::string::npos)
      << reserved.status().message();
}

TEST_P(DriverConformanceTest, ReleaseLeavesNothingOfOneTenantForTheNext) {
  ASSERT_TRUE(Boot().ok());
  auto a = Reserve("lab-a.job1.task0.try1");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  GetParam().write_state(*a, "weights", "secret-of-lab-a");
  EXPECT_EQ(GetParam().read_state(*a, "weights"), "secret-of-lab-a");
  ASSERT_TRUE(Release("lab-a.job1.task0.try1").ok());
  auto b = Reserve("lab-b.job1.task0.try1");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(GetParam().read_state(*b, "weights"), "none") << "tenant b reads tenant a's state";
  ASSERT_TRUE(Release("lab-b.job1.task0.try1").ok());
}

TEST_P(DriverConformanceTest, AResetClearsStateAndTheBoardStaysUsable) {
  ASSERT_TRUE(Boot().ok());
  auto a = Reserve("lab-a.job2.task0.try1");
  ASSERT_TRUE(a.ok());
  GetParam().write_state(*a, "k", "v");
  v1::DriverRequest reset;
  reset.mutable_reset();
  auto after = Ask(reset);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->state().power(), v1::BOARD_BOOTED);
  EXPECT_EQ(GetParam().read_state(*a, "k"), "none");
  EXPECT_TRUE(Health().healthy());
}

TEST_P(DriverConformanceTest, AFailingHealthCheckSaysWhyInTheBoardsOwnWords) {
  ASSERT_TRUE(Boot().ok());
  GetParam().break_board(dir_, board_, "fan 3 stopped");
  const auto health = Health();
  EXPECT_FALSE(health.healthy());
  EXPECT_NE(health.output().find("fan 3 stopped"), std::string::npos) << health.output();
}

TEST_P(DriverConformanceTest, CountsWhatItsBoardsDo) {
  ASSERT_TRUE(Boot().ok());
  v1::DriverRequest stats;
  stats.mutable_stats();
  auto counted = Ask(stats);
  ASSERT_TRUE(counted.ok()) << counted.status().ToString();
  EXPECT_FALSE(counted->stats().counters().empty());
}

TEST_P(DriverConformanceTest, AnUnknownBoardIsRefusedByName) {
  v1::DriverRequest on;
  on.mutable_power()->set_on(true);
  auto answer = Ask(on, "no-such-board");
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(answer.status().message().find("no-such-board"), std::string::npos);
}

TEST_P(DriverConformanceTest, ADriverKilledIsStartedAgainWithItsBoardsAsTheyWere) {
  ASSERT_TRUE(Boot().ok());
  const pid_t first = driver_->pid();
  ASSERT_EQ(kill(first, SIGKILL), 0);
  EXPECT_EQ(PowerOf(board_), v1::BOARD_BOOTED) << "the board lost its state with its driver";
  EXPECT_EQ(driver_->starts(), 2);
  EXPECT_NE(driver_->pid(), first);
  EXPECT_TRUE(Health().healthy());
}

INSTANTIATE_TEST_SUITE_P(Drivers, DriverConformanceTest, ::testing::Values(SimKind(), EtherKind()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace snn
