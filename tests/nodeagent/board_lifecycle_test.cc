// A driver board's life between holders, against a fake driver that answers when the test says:
// reserved as it is, or booted first when it was powered off; a failed boot makes the board's
// health 0 and tells its holder the board failed; released (scrubbed) then checked; powered off
// once idle long enough, never while held or while a call is under way.
#include "nodeagent/boards/board_lifecycle.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "nodeagent/hal/driver_board.h"

namespace snn {
namespace {

struct Sent {
  std::string driver;
  v1::DriverRequest request;
  BoardLifecycle::Answer then;
};

class BoardLifecycleTest : public ::testing::Test {
 protected:
  BoardLifecycleTest() : boards_(MakeBoards()) {
    lifecycle_.set_on_changed([this] { ++changes_; });
  }

  static std::vector<std::unique_ptr<Board>> MakeBoards() {
    std::vector<std::unique_ptr<Board>> boards;
    for (int i = 0; i < 2; ++i) {
      v1::BoardInfo info;
      info.set_type("loihi-emu");
      info.set_width(1);
      info.set_height(1);
      info.set_ksps(1000);
      info.set_streams(4);
      info.set_health(100);
      boards.push_back(
          std::make_unique<DriverBoard>(info, BoardDriverRef{"emu", "b" + std::to_string(i), {}}));
    }
    return boards;
  }
  DriverBoard& board(uint32_t i) { return *static_cast<DriverBoard*>(boards_.board(i)); }

  // Answers the oldest call still waiting.
  void Answer(Result<v1::DriverResponse> answer) {
    ASSERT_FALSE(sent_.empty());
    Sent call = std::move(sent_.front());
    sent_.pop_front();
    call.then(std::move(answer));
  }
  static v1::DriverResponse Reservation(const std::string& endpoint) {
    v1::DriverResponse r;
    r.mutable_reservation()->add_endpoints(endpoint);
    return r;
  }

  BoardLifecycle::ReserveCalls Calls() {
    BoardLifecycle::ReserveCalls calls;
    calls.done = [this](Result<v1::DriverReservation> r, bool board_failed) {
      done_.emplace(std::move(r));
      board_failed_ = board_failed;
    };
    calls.note = [this](const std::string& note) { notes_.push_back(note); };
    calls.wanted = [this] { return wanted_; };
    return calls;
  }

  ManualClock clock_;
  TaskBoards boards_;
  std::deque<Sent> sent_;
  BoardLifecycle lifecycle_{
      clock_, boards_,
      [this](const std::string& driver, v1::DriverRequest request, BoardLifecycle::Answer then) {
        sent_.push_back({driver, std::move(request), std::move(then)});
      }};
  int changes_ = 0;
  std::optional<Result<v1::DriverReservation>> done_;
  bool board_failed_ = false;
  std::vector<std::string> notes_;
  bool wanted_ = true;
};

TEST_F(BoardLifecycleTest, AnOnBoardIsReservedForItsHolderAndCountsTheCallUnderWay) {
  lifecycle_.Reserve(1, {"alice.job3.task0", 250, 1001, 1002}, Calls());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].driver, "emu");
  EXPECT_EQ(sent_[0].request.board(), "b1");
  ASSERT_TRUE(sent_[0].request.has_reserve());
  EXPECT_EQ(sent_[0].request.reserve().task(), "alice.job3.task0");
  EXPECT_EQ(sent_[0].request.reserve().ksps(), 250u);
  EXPECT_EQ(sent_[0].request.reserve().uid(), 1001u);
  EXPECT_EQ(sent_[0].request.reserve().gid(), 1002u);
  EXPECT_EQ(board(1).calls, 1);
  EXPECT_FALSE(done_);

  clock_.AdvanceMs(70);
  Answer(Reservation("127.0.0.9:5000"));
  ASSERT_TRUE(done_ && done_->ok());
  EXPECT_EQ((*done_)->endpoints(0), "127.0.0.9:5000");
  EXPECT_FALSE(board_failed_);
  EXPECT_EQ(board(1).calls, 0);
  EXPECT_EQ(board(1).last_used_ms, clock_.NowMs());
  EXPECT_TRUE(notes_.empty());
}

TEST_F(BoardLifecycleTest, ARefusedReservationSaysWhichBoardAndIsNotTheBoardsFailure) {
  lifecycle_.Reserve(0, {"t", 1, 1, 1}, Calls());
  Answer(Status(Code::kResourceExhausted, "already reserved"));
  ASSERT_TRUE(done_);
  ASSERT_FALSE(done_->ok());
  EXPECT_EQ(done_->status().message(),
            "board 0 (b0 of driver emu) cannot be reserved: already reserved");
  EXPECT_FALSE(board_failed_);
  EXPECT_TRUE(board(0).healthy());
}

TEST_F(BoardLifecycleTest, APoweredOffBoardIsBootedThenReserved) {
  board(0).SetPower(DriverBoard::Power::kOff);
  lifecycle_.Reserve(0, {"t", 1, 1, 1}, Calls());
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_TRUE(sent_[0].request.has_boot());
  EXPECT_EQ(board(0).power(), DriverBoard::Power::kBooting);
  EXPECT_EQ(changes_, 1);
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_EQ(notes_[0], "board 0 (b0 of driver emu) was powered off: powering it on and booting it");

  v1::DriverResponse booted;
  booted.mutable_state()->set_boot_ms(1234);
  Answer(booted);
  EXPECT_EQ(board(0).power(), DriverBoard::Power::kOn);
  ASSERT_EQ(notes_.size(), 2u);
  EXPECT_EQ(notes_[1],
            "board 0 (b0 of driver emu) was powered off: powered on and booted in 1234 ms");
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_TRUE(sent_[0].request.has_reserve());
  EXPECT_FALSE(done_);
  Answer(Reservation("127.0.0.9:1"));
  ASSERT_TRUE(done_ && done_->ok());
}

TEST_F(BoardLifecycleTest, AFailedBootFailsTheBoardAndTellsAHolderStillWaiting) {
  board(0).SetPower(DriverBoard::Power::kOff);
  lifecycle_.Reserve(0, {"t", 1, 1, 1}, Calls());
  Answer(Unavailable("no power"));
  EXPECT_EQ(board(0).power(), DriverBoard::Power::kOff);
  EXPECT_FALSE(board(0).healthy());
  EXPECT_EQ(board(0).Describe().health(), 0u);
  EXPECT_EQ(board(0).Describe().health_detail(), "power-on and boot failed: no power");
  ASSERT_TRUE(done_);
  EXPECT_EQ(done_->status().message(),
            "board 0 (b0 of driver emu) could not be powered on and booted: no power");
  EXPECT_TRUE(board_failed_);
  EXPECT_TRUE(sent_.empty());
}

TEST_F(BoardLifecycleTest, AHolderThatStoppedWaitingDuringTheBootGetsNoReservation) {
  board(1).SetPower(DriverBoard::Power::kOff);
  lifecycle_.Reserve(1, {"t", 1, 1, 1}, Calls());
  wanted_ = false;
  v1::DriverResponse booted;
  Answer(booted);
  EXPECT_EQ(board(1).power(), DriverBoard::Power::kOn);
  EXPECT_TRUE(sent_.empty());  // no reservation asked for
  EXPECT_FALSE(done_);
}

TEST_F(BoardLifecycleTest, AReleasedBoardIsCheckedAndAFailedCheckFailsIt) {
  int released = 0;
  lifecycle_.Release(1, "alice.job3.task0", "job 3 task 0", [&] { ++released; });
  ASSERT_EQ(sent_.size(), 1u);
  ASSERT_TRUE(sent_[0].request.has_release());
  EXPECT_EQ(sent_[0].request.release().task(), "alice.job3.task0");
  Answer(v1::DriverResponse());
  EXPECT_EQ(released, 1);
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_TRUE(sent_[0].request.has_health_check());
  v1::DriverResponse sick;
  sick.mutable_health()->set_healthy(false);
  sick.mutable_health()->set_output("core 3 stuck");
  Answer(sick);
  EXPECT_FALSE(board(1).healthy());
  EXPECT_EQ(board(1).Describe().health_detail(), "core 3 stuck");
  EXPECT_EQ(changes_, 1);
  EXPECT_EQ(board(1).calls, 0);
}

TEST_F(BoardLifecycleTest, AFailedReleaseFailsTheBoardWithoutACheck) {
  int released = 0;
  lifecycle_.Release(0, "t", "t", [&] { ++released; });
  Answer(Internal("scrub failed"));
  EXPECT_EQ(released, 0);
  EXPECT_TRUE(sent_.empty());
  EXPECT_EQ(board(0).Describe().health_detail(), "release failed: scrub failed");
  EXPECT_EQ(changes_, 1);
}

TEST_F(BoardLifecycleTest, IdleBoardsArePoweredOffButNotHeldOnesNorBusyOnes) {
  const auto none = [] { return std::set<uint32_t>(); };
  lifecycle_.SuspendIdle(0, none);  // never, while suspend_after is 0
  EXPECT_TRUE(sent_.empty());
  lifecycle_.SuspendIdle(60'000, none);  // idle from now on
  EXPECT_TRUE(sent_.empty());
  clock_.AdvanceMs(59'999);
  lifecycle_.SuspendIdle(60'000, none);
  EXPECT_TRUE(sent_.empty());

  clock_.AdvanceMs(1);
  lifecycle_.Check(1);  // a call under way on board 1: not idle
  ASSERT_EQ(sent_.size(), 1u);
  int asked = 0;
  lifecycle_.SuspendIdle(60'000, [&] {
    ++asked;
    return std::set<uint32_t>{};
  });
  EXPECT_EQ(asked, 1);
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_EQ(sent_[1].request.board(), "b0");
  ASSERT_TRUE(sent_[1].request.has_power());
  EXPECT_FALSE(sent_[1].request.power().on());
  EXPECT_EQ(board(0).power(), DriverBoard::Power::kSuspending);
  EXPECT_EQ(board(0).Describe().power(), "off");
  sent_.pop_front();  // the check: never answered here
  board(1).calls = 0;
  Answer(v1::DriverResponse());
  EXPECT_EQ(board(0).power(), DriverBoard::Power::kOff);

  // Board 1, held by a task, stays on however long it is idle.
  clock_.AdvanceMs(3'600'000);
  lifecycle_.SuspendIdle(60'000, [] { return std::set<uint32_t>{1}; });
  EXPECT_TRUE(sent_.empty());
  EXPECT_EQ(board(1).power(), DriverBoard::Power::kOn);
}

TEST_F(BoardLifecycleTest, APowerOffThatFailsLeavesTheBoardOn) {
  clock_.AdvanceMs(1);
  lifecycle_.SuspendIdle(10, [] { return std::set<uint32_t>{1}; });
  clock_.AdvanceMs(10);
  lifecycle_.SuspendIdle(10, [] { return std::set<uint32_t>{1}; });
  ASSERT_EQ(sent_.size(), 1u);
  Answer(Unavailable("relay stuck"));
  EXPECT_EQ(board(0).power(), DriverBoard::Power::kOn);
  EXPECT_TRUE(board(0).healthy());
}

}  // namespace
}  // namespace snn
