#include "nodeagent/boards/board_lifecycle.h"

#include <glog/logging.h>

#include <utility>

#include "nodeagent/boards/device_holders.h"
#include "nodeagent/hal/driver_board.h"

namespace snn {
namespace {

std::string Which(uint32_t index, const BoardDriverRef& via) {
  return "board " + std::to_string(index) + " (" + via.board + " of driver " + via.driver + ")";
}

}  // namespace

BoardLifecycle::BoardLifecycle(const Clock& clock, TaskBoards& boards, DriverCall call)
    : clock_(clock), boards_(boards), call_(std::move(call)) {}

DriverBoard* BoardLifecycle::Driven(uint32_t index) {
  return dynamic_cast<DriverBoard*>(boards_.board(index));
}

void BoardLifecycle::CallBoard(uint32_t index, v1::DriverRequest request, Answer then) {
  DriverBoard* board = Driven(index);
  request.set_board(board->driver()->board);
  ++board->calls;
  call_(board->driver()->driver, std::move(request),
        [this, index, then = std::move(then)](Result<v1::DriverResponse> answer) {
          DriverBoard* b = Driven(index);
          --b->calls;
          b->last_used_ms = clock_.NowMs();
          then(std::move(answer));
        });
}

void BoardLifecycle::Reserve(uint32_t index, Holder holder, ReserveCalls calls) {
  DriverBoard* board = Driven(index);
  if (board == nullptr) {
    calls.done(FailedPrecondition("board " + std::to_string(index) + " is not a driver board"),
               false);
    return;
  }
  if (board->power() != DriverBoard::Power::kOn) {
    Boot(index, std::move(holder), std::move(calls));
    return;
  }
  v1::DriverRequest request;
  auto* reserve = request.mutable_reserve();
  reserve->set_task(holder.name);
  reserve->set_ksps(holder.ksps);
  reserve->set_uid(holder.uid);
  reserve->set_gid(holder.gid);
  const std::string which = Which(index, *board->driver());
  CallBoard(index, std::move(request),
            [which, done = std::move(calls.done)](Result<v1::DriverResponse> answer) {
              if (!answer.ok()) {
                done(Status(answer.status().code(),
                            which + " cannot be reserved: " + answer.status().message()),
                     false);
                return;
              }
              done(answer->reservation(), false);
            });
}

// A board powered off while idle: the driver powers it on and boots it (the holder hears so
// meanwhile, and how long it took after), then it is reserved as usual. A board that cannot be
// brought back fails (health 0: the master drains it) and the holder hears that the board failed,
// so that the master runs the job elsewhere.
void BoardLifecycle::Boot(uint32_t index, Holder holder, ReserveCalls calls) {
  DriverBoard* board = Driven(index);
  const std::string which = Which(index, *board->driver());
  calls.note(which + " was powered off: powering it on and booting it");
  board->SetPower(DriverBoard::Power::kBooting);
  Changed();
  v1::DriverRequest request;
  request.mutable_boot();
  CallBoard(
      index, std::move(request),
      [this, index, which, holder = std::move(holder),
       calls = std::move(calls)](Result<v1::DriverResponse> answer) mutable {
        DriverBoard* b = Driven(index);
        if (!answer.ok()) {
          b->SetPower(DriverBoard::Power::kOff);
          b->SetHealth(false, "power-on and boot failed: " + answer.status().message());
          Changed();
          if (calls.wanted()) {
            calls.done(
                Status(answer.status().code(),
                       which + " could not be powered on and booted: " + answer.status().message()),
                true);
          }
          return;
        }
        b->SetPower(DriverBoard::Power::kOn);
        Changed();
        LOG(INFO) << which << " powered on and booted in " << answer->state().boot_ms() << " ms";
        if (!calls.wanted()) return;  // released as its holder ends
        calls.note(which + " was powered off: powered on and booted in " +
                   std::to_string(answer->state().boot_ms()) + " ms");
        Reserve(index, std::move(holder), std::move(calls));
      });
}

void BoardLifecycle::Release(uint32_t index, const std::string& holder_name,
                             const std::string& log_name, std::function<void()> released) {
  DriverBoard* board = Driven(index);
  if (board == nullptr) return;
  // The allocation ends: so does every hold on the board's device nodes (a descriptor the holder
  // handed to a process outside it), before the driver scrubs the board.
  for (const DeviceHolder& h : KillDeviceHolders(board->driver()->devices)) {
    LOG(WARNING) << log_name << " ended; pid " << h.pid << " (uid " << h.uid << ") still held "
                 << h.device << " of board " << index << ": killed";
  }
  v1::DriverRequest request;
  request.mutable_release()->set_task(holder_name);
  CallBoard(index, std::move(request),
            [this, index, released = std::move(released)](Result<v1::DriverResponse> answer) {
              DriverBoard* b = Driven(index);
              if (!answer.ok()) {
                // The first failure says most (a boot that failed, say): kept.
                if (b->healthy())
                  b->SetHealth(false, "release failed: " + answer.status().message());
                Changed();
                return;
              }
              if (released) released();
              Check(index);
            });
}

void BoardLifecycle::Check(uint32_t index) {
  if (Driven(index) == nullptr) return;
  v1::DriverRequest request;
  request.mutable_health_check();
  CallBoard(index, std::move(request), [this, index](Result<v1::DriverResponse> answer) {
    DriverBoard* b = Driven(index);
    const bool healthy = answer.ok() && answer->health().healthy();
    const std::string output = answer.ok() ? answer->health().output()
                                           : "health check failed: " + answer.status().message();
    const bool was = b->Describe().health() > 0;
    b->SetHealth(healthy, output);
    if (!healthy) LOG(WARNING) << "board " << index << " failed its health check: " << output;
    if (was != healthy) Changed();
  });
}

void BoardLifecycle::SuspendIdle(uint64_t after_ms,
                                 const std::function<std::set<uint32_t>()>& held) {
  if (after_ms == 0) return;
  const int64_t now = clock_.NowMs();
  std::set<uint32_t> holding;  // looked up once a board is due
  bool looked = false;
  for (uint32_t i = 0; i < boards_.size(); ++i) {
    DriverBoard* board = Driven(i);
    if (board == nullptr || board->power() != DriverBoard::Power::kOn || board->calls > 0) continue;
    if (board->last_used_ms == 0) board->last_used_ms = now;  // idle from the agent's start
    if (now - board->last_used_ms < static_cast<int64_t>(after_ms)) continue;
    if (!looked) {
      holding = held();
      looked = true;
    }
    if (holding.count(i) != 0) continue;
    board->SetPower(DriverBoard::Power::kSuspending);
    Changed();
    v1::DriverRequest request;
    request.mutable_power()->set_on(false);
    CallBoard(i, std::move(request), [this, i, after_ms](Result<v1::DriverResponse> answer) {
      DriverBoard* b = Driven(i);
      if (b->power() != DriverBoard::Power::kSuspending) return;  // wanted meanwhile
      if (!answer.ok()) {
        LOG(WARNING) << "board " << i << " could not be powered off: " << answer.status().message();
        b->SetPower(DriverBoard::Power::kOn);
      } else {
        LOG(INFO) << "board " << i << " powered off: idle " << after_ms << " ms";
        b->SetPower(DriverBoard::Power::kOff);
      }
      Changed();
    });
  }
}

}  // namespace snn
