// The driver side of the task manager: a task on a board that a driver process runs has the
// board reserved before its command runs (the reservation's environment joins the command's),
// and when it ends the board is released (scrubbed) and its health checked, all off the io
// thread (DriverPool); the answers come back at the next Poll.
#include <glog/logging.h>
#include <signal.h>

#include <algorithm>
#include <set>

#include "common/base/split.h"
#include "common/daemon/board_drivers.h"
#include "nodeagent/boards/device_holders.h"
#include "nodeagent/hal/driver_board.h"
#include "nodeagent/tasks/launcher.h"
#include "nodeagent/tasks/task_manager.h"
#include "nodeagent/tasks/task_output.h"

namespace snn {
namespace {

std::string TaskName(const v1::LaunchRequest& req) {
  return TaskDirName(req.tenant(), req.tenant_job_id(), req.index(), req.attempt());
}

}  // namespace

void TaskManager::ReserveBoard(Task& task, const RunAs& who) {
  auto* board = static_cast<DriverBoard*>(boards_.board(task.launch.board));
  if (board->power() != DriverBoard::Power::kOn) {
    BootForTask(task, who);
    return;
  }
  const v1::LaunchRequest& req = task.launch.request;
  const BoardDriverRef& via = *board->driver();
  v1::DriverRequest request;
  request.set_board(via.board);
  auto* reserve = request.mutable_reserve();
  reserve->set_task(TaskName(req));
  reserve->set_ksps(task.launch.resources.ksps());
  reserve->set_uid(who.uid);
  reserve->set_gid(who.gid);
  ++board->calls;
  options_.drivers->Call(
      via.driver, std::move(request),
      [this, key = task.launch.key, token = task.launch.gateway_token](
          Result<v1::DriverResponse> answer) { OnReserved(key, token, std::move(answer)); });
}

// A task's board was powered off while idle: the driver powers it on and boots it (the task
// says so meanwhile, and how long it took after), then the board is reserved as usual. A board
// that cannot be brought back fails its check (the master drains it) and the task is lost, so
// the master runs the job elsewhere.
void TaskManager::BootForTask(Task& task, const RunAs& who) {
  const uint32_t index = task.launch.board;
  auto* board = static_cast<DriverBoard*>(boards_.board(index));
  const BoardDriverRef& via = *board->driver();
  const std::string which =
      "board " + std::to_string(index) + " (" + via.board + " of driver " + via.driver + ")";
  task.SetNote(which + " was powered off: powering it on and booting it");
  board->SetPower(DriverBoard::Power::kBooting);
  ++board->calls;
  if (on_boards_changed_) on_boards_changed_();
  v1::DriverRequest request;
  request.set_board(via.board);
  request.mutable_boot();
  options_.drivers->Call(
      via.driver, std::move(request),
      [this, index, which, who, key = task.launch.key,
       token = task.launch.gateway_token](Result<v1::DriverResponse> answer) {
        auto* b = static_cast<DriverBoard*>(boards_.board(index));
        --b->calls;
        b->last_used_ms = clock_.NowMs();
        auto it = tasks_.find(key);
        const bool waiting = it != tasks_.end() && it->second.launch.gateway_token == token &&
                             !it->second.ended() && !it->second.stopping();
        if (!answer.ok()) {
          b->SetPower(DriverBoard::Power::kOff);
          b->SetHealth(false, "power-on and boot failed: " + answer.status().message());
          if (on_boards_changed_) on_boards_changed_();
          if (waiting) {
            it->second.process.awaiting_board = false;
            FailHeld(it->second,
                     which + " could not be powered on and booted: " + answer.status().message(),
                     v1::TASK_LOST);
          }
          return;
        }
        b->SetPower(DriverBoard::Power::kOn);
        if (on_boards_changed_) on_boards_changed_();
        LOG(INFO) << which << " powered on and booted in " << answer->state().boot_ms() << " ms";
        if (!waiting) return;  // it is released as the task ends
        it->second.SetNote(which + " was powered off: powered on and booted in " +
                           std::to_string(answer->state().boot_ms()) + " ms");
        ReserveBoard(it->second, who);
      });
}

void TaskManager::SuspendIdleBoards() {
  if (suspend_after_ms_ == 0 || options_.drivers == nullptr) return;
  const int64_t now = clock_.NowMs();
  std::set<uint32_t> held;  // boards of tasks not ended, looked up once a board is due
  bool looked = false;
  for (uint32_t i = 0; i < boards_.size(); ++i) {
    auto* board = dynamic_cast<DriverBoard*>(boards_.board(i));
    if (board == nullptr || board->power() != DriverBoard::Power::kOn || board->calls > 0) continue;
    if (board->last_used_ms == 0) board->last_used_ms = now;  // idle from the agent's start
    if (now - board->last_used_ms < static_cast<int64_t>(suspend_after_ms_)) continue;
    if (!looked) {
      for (const auto& [key, task] : tasks_) {
        if (!task.ended()) held.insert(task.launch.board);
      }
      looked = true;
    }
    if (held.count(i) != 0) continue;
    board->SetPower(DriverBoard::Power::kSuspending);
    ++board->calls;
    if (on_boards_changed_) on_boards_changed_();
    v1::DriverRequest request;
    request.set_board(board->driver()->board);
    request.mutable_power()->set_on(false);
    options_.drivers->Call(
        board->driver()->driver, std::move(request), [this, i](Result<v1::DriverResponse> answer) {
          auto* b = static_cast<DriverBoard*>(boards_.board(i));
          --b->calls;
          b->last_used_ms = clock_.NowMs();
          if (b->power() != DriverBoard::Power::kSuspending) return;  // wanted
          if (!answer.ok()) {
            LOG(WARNING) << "board " << i
                         << " could not be powered off: " << answer.status().message();
            b->SetPower(DriverBoard::Power::kOn);
          } else {
            LOG(INFO) << "board " << i << " powered off: idle " << suspend_after_ms_ << " ms";
            b->SetPower(DriverBoard::Power::kOff);
          }
          if (on_boards_changed_) on_boards_changed_();
        });
  }
}

void TaskManager::OnReserved(const TaskKey& key, const std::string& token,
                             Result<v1::DriverResponse> answer) {
  auto it = tasks_.find(key);
  if (it != tasks_.end()) {
    auto* board = static_cast<DriverBoard*>(boards_.board(it->second.launch.board));
    --board->calls;
    board->last_used_ms = clock_.NowMs();
  }
  if (it == tasks_.end() || it->second.launch.gateway_token != token) return;
  Task& task = it->second;
  task.process.awaiting_board = false;
  const BoardDriverRef& via = *boards_.board(task.launch.board)->driver();
  if (task.ended() || task.stopping()) return;  // it is released as the task ends
  if (!answer.ok()) {
    FailHeld(task, "board " + std::to_string(task.launch.board) + " (" + via.board + " of driver " +
                       via.driver + ") cannot be reserved: " + answer.status().message());
    return;
  }
  const v1::DriverReservation& reservation = answer->reservation();
  std::map<std::string, std::string> env(reservation.env().begin(), reservation.env().end());
  auto endpoints = env.find("SNN_BOARD_ENDPOINTS");
  if (endpoints != env.end()) {
    for (auto& [name, value] :
         DriverAliasEnv(options_.drivers->config(via.driver), SplitList(endpoints->second))) {
      env[name] = value;
    }
  }
  task.process.start.env = std::move(env);
  // What the driver handed over must be the board's own device nodes, which every other task is
  // kept from: one it did not list could be opened by anyone its permissions let.
  if (options_.confine_devices) {
    for (const std::string& path : reservation.devices()) {
      const auto& own = via.devices;
      if (std::find(own.begin(), own.end(), path) == own.end()) {
        FailHeld(task, "the driver handed over device " + path + " for board " +
                           std::to_string(task.launch.board) +
                           ", which the boards file does not list under the board's devices: "
                           "other tasks could open it (add it there)");
        return;
      }
    }
    RefreshDeviceFilters();  // the board may have come back under new device numbers
  }
  // Its network is its boards' endpoints, relayed by its shepherd (board_relay.h).
  task.process.start.isolate_network = options_.isolate_boards;
  task.process.start.relay.assign(reservation.endpoints().begin(), reservation.endpoints().end());
  StartHeld(task);
}

TaskManager::DeviceNumbers TaskManager::LookUpDeviceNumbers() {
  DeviceNumbers numbers;
  if (!options_.confine_devices) return numbers;
  for (uint32_t i = 0; i < boards_.size(); ++i) {
    const Board* board = boards_.board(i);
    if (board == nullptr || board->driver() == nullptr) continue;
    for (const std::string& path : board->driver()->devices) {
      auto device = DeviceAt(path);
      if (device.ok()) {
        numbers[i].insert(*device);
      } else if (device.status().code() != Code::kNotFound) {  // absent: unplugged
        LOG(WARNING) << "board " << i << "'s device " << path << ": " << device.status().message();
      }
    }
  }
  return numbers;
}

Status TaskManager::ConfineDevices(const Task& task, const DeviceNumbers& numbers) {
  if (!options_.confine_devices) return Status::Ok();
  std::set<DeviceNumber> denied;
  for (const auto& [board, devices] : numbers) {
    if (board != task.launch.board) denied.insert(devices.begin(), devices.end());
  }
  if (auto own = numbers.find(task.launch.board); own != numbers.end()) {
    for (const DeviceNumber& d : own->second) denied.erase(d);
  }
  if (denied.empty()) return Status::Ok();
  const std::vector<DeviceNumber> list(denied.begin(), denied.end());
  const Status s = options_.cgroups != nullptr
                       ? options_.cgroups->DenyDevices(task.launch.cgroup, list)
                       : FailedPrecondition("no cgroups");
  if (s.ok()) return s;
  return FailedPrecondition("cannot keep the task from other boards' device nodes: " + s.message() +
                            " (snn-agent --task_confine_devices=false runs tasks without)");
}

void TaskManager::RefreshDeviceFilters() {
  DeviceNumbers now = LookUpDeviceNumbers();
  if (now == device_numbers_) return;
  device_numbers_ = std::move(now);
  for (auto& [key, task] : tasks_) {
    if (task.ended() || task.stopping() || task.process.pid <= 0) continue;
    if (Status s = ConfineDevices(task, device_numbers_); !s.ok()) {
      LOG(ERROR) << "task " << task.launch.cgroup << ": " << s.message();
      BeginStop(task, v1::TASK_KILLED, s.message());
    }
  }
}

void TaskManager::ReleaseDriverBoard(const Task& task) {
  const Board* board = boards_.board(task.launch.board);
  if (board == nullptr || board->driver() == nullptr || options_.drivers == nullptr) return;
  const BoardDriverRef& via = *board->driver();
  // The allocation ends: so does every hold on the board's device nodes (a descriptor the task
  // handed to a process outside it), before the driver scrubs the board.
  for (const DeviceHolder& h : KillDeviceHolders(via.devices)) {
    LOG(WARNING) << TaskLogName(task.launch.request) << " ended; pid " << h.pid << " (uid " << h.uid
                 << ") still held " << h.device << " of board " << task.launch.board << ": killed";
  }
  v1::DriverRequest request;
  request.set_board(via.board);
  request.mutable_release()->set_task(TaskName(task.launch.request));
  const uint32_t index = task.launch.board;
  ++static_cast<DriverBoard*>(boards_.board(index))->calls;
  options_.drivers->Call(via.driver, std::move(request),
                         [this, index](Result<v1::DriverResponse> answer) {
                           auto* b = static_cast<DriverBoard*>(boards_.board(index));
                           --b->calls;
                           b->last_used_ms = clock_.NowMs();
                           if (!answer.ok()) {
                             // The first failure says most (a boot that failed, say): kept.
                             if (b->healthy()) {
                               b->SetHealth(false, "release failed: " + answer.status().message());
                             }
                             if (on_boards_changed_) on_boards_changed_();
                             return;
                           }
                           if (options_.confine_devices) RefreshDeviceFilters();
                           CheckDriverBoard(index);
                         });
}

void TaskManager::CheckDriverBoard(uint32_t index) {
  auto* board = dynamic_cast<DriverBoard*>(boards_.board(index));
  if (board == nullptr) return;
  v1::DriverRequest request;
  request.set_board(board->driver()->board);
  request.mutable_health_check();
  ++board->calls;
  options_.drivers->Call(board->driver()->driver, std::move(request),
                         [this, index](Result<v1::DriverResponse> answer) {
                           auto* b = static_cast<DriverBoard*>(boards_.board(index));
                           --b->calls;
                           b->last_used_ms = clock_.NowMs();
                           const bool healthy = answer.ok() && answer->health().healthy();
                           const std::string output =
                               answer.ok() ? answer->health().output()
                                           : "health check failed: " + answer.status().message();
                           const bool was = b->Describe().health() > 0;
                           b->SetHealth(healthy, output);
                           if (!healthy)
                             LOG(WARNING)
                                 << "board " << index << " failed its health check: " << output;
                           if (was != healthy && on_boards_changed_) on_boards_changed_();
                         });
}

}  // namespace snn
