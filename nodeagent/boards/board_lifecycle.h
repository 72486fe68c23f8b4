// The life of the node's driver boards between their holders: a board is reserved for a holder
// (powered on and booted first if it was powered off while idle), released when the holder is
// done (every process still holding one of its device nodes killed, the board scrubbed by its
// driver, then its health checked), and powered off once idle for long enough. It speaks in
// boards and holders; which task holds which board is the task manager's business.
// A failed boot, release or check makes the board's health 0 with what failed (the master then
// drains it). Every driver call runs off the io thread (`call`, normally DriverPool::Call) and
// answers on it; each board counts its calls under way and when the last one ended, which is
// how idleness is measured.
// Thread contract: agent io thread only. Time comes from the injected Clock.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "common/base/clock.h"
#include "common/base/status.h"
#include "nodeagent/boards/task_boards.h"
#include "proto/driver.pb.h"

namespace snn {

class DriverBoard;

class BoardLifecycle {
 public:
  using Answer = std::function<void(Result<v1::DriverResponse>)>;
  // Sends `request` to the driver named; `then` runs on the io thread with the answer.
  using DriverCall =
      std::function<void(const std::string& driver, v1::DriverRequest request, Answer then)>;

  BoardLifecycle(const Clock& clock, TaskBoards& boards, DriverCall call);

  // Who a board is reserved for: its name at the driver, its spike budget, its user.
  struct Holder {
    std::string name;
    uint64_t ksps = 0;
    uid_t uid = 0;
    gid_t gid = 0;
  };
  struct ReserveCalls {
    // Once: the reservation, or why there is none; `board_failed`: the board could not be
    // brought back (its health is 0 now), not a refusal of this holder.
    std::function<void(Result<v1::DriverReservation>, bool board_failed)> done;
    // What is happening meanwhile, in words (a board powered off is being booted).
    std::function<void(const std::string&)> note;
    // Whether the holder still waits, asked after a boot (false: no reservation is made).
    std::function<bool()> wanted;
  };
  // Reserves driver board `index` for `holder`, booting it first if it is powered off.
  void Reserve(uint32_t index, Holder holder, ReserveCalls calls);

  // The holder `holder_name` (`log_name` in the log) is done with board `index`: processes
  // still holding its device nodes are killed, then the driver releases (scrubs) it; once it
  // has, `released` runs and the board's health is checked.
  void Release(uint32_t index, const std::string& holder_name, const std::string& log_name,
               std::function<void()> released);
  // Asks the board's driver for a health check; the answer sets the board's health.
  void Check(uint32_t index);
  // Powers off the driver boards idle for `after_ms` (none while it is 0) that no holder holds
  // (`held`, asked only once a board is due).
  void SuspendIdle(uint64_t after_ms, const std::function<std::set<uint32_t>()>& held);

  // Called when a board's power or health changed: the master should hear of it.
  void set_on_changed(std::function<void()> fn) { on_changed_ = std::move(fn); }

 private:
  DriverBoard* Driven(uint32_t index);
  // Counts a call to board `index` under way, sends it, and uncounts it when it answers.
  void CallBoard(uint32_t index, v1::DriverRequest request, Answer then);
  void Boot(uint32_t index, Holder holder, ReserveCalls calls);
  void Changed() {
    if (on_changed_) on_changed_();
  }

  const Clock& clock_;
  TaskBoards& boards_;
  const DriverCall call_;
  std::function<void()> on_changed_;
};

}  // namespace snn
