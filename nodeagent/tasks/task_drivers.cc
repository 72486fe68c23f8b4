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
#include "nodeagent/tasks/launcher.h"
#include "nodeagent/tasks/task_manager.h"
#include "nodeagent/tasks/task_output.h"

namespace snn {
namespace {

std::string TaskName(const v1::LaunchRequest& req) {
  return TaskDirName(req.tenant(), req.tenant_job_id(), req.index(), req.attempt());
}

}  // namespace

DeviceNumbers DeviceNumbersOf(TaskBoards& boards) {
  DeviceNumbers numbers;
  for (uint32_t i = 0; i < boards.size(); ++i) {
    const Board* board = boards.board(i);
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

void TaskManager::ReserveBoard(Task& task, const RunAs& who) {
  BoardLifecycle::Holder holder{TaskName(task.launch.request), task.launch.resources.ksps(),
                                who.uid, who.gid};
  const TaskKey key = task.launch.key;
  const std::string token = task.launch.gateway_token;
  // Whether the task still waits for its board: the same attempt, neither ended nor stopping.
  auto waiting = [this, key, token]() -> Task* {
    auto it = tasks_.find(key);
    if (it == tasks_.end() || it->second.launch.gateway_token != token) return nullptr;
    return &it->second;
  };
  BoardLifecycle::ReserveCalls calls;
  calls.done = [this, waiting](Result<v1::DriverReservation> reservation, bool board_failed) {
    if (Task* task = waiting()) OnReserved(*task, std::move(reservation), board_failed);
  };
  calls.note = [waiting](const std::string& note) {
    if (Task* task = waiting()) task->SetNote(note);
  };
  calls.wanted = [waiting] {
    Task* task = waiting();
    return task != nullptr && !task->ended() && !task->stopping();
  };
  lifecycle_.Reserve(task.launch.board, std::move(holder), std::move(calls));
}

void TaskManager::OnReserved(Task& task, Result<v1::DriverReservation> answer, bool board_failed) {
  task.process.awaiting_board = false;
  const BoardDriverRef& via = *boards_.board(task.launch.board)->driver();
  if (task.ended() || task.stopping()) return;  // it is released as the task ends
  if (!answer.ok()) {
    FailHeld(task, answer.status().message(),
             board_failed ? v1::TASK_LOST : v1::TASK_LAUNCH_FAILED);
    return;
  }
  const v1::DriverReservation& reservation = *answer;
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

Status ConfineDevices(const TaskManagerOptions& options, const Task& task,
                      const DeviceNumbers& numbers) {
  if (!options.confine_devices) return Status::Ok();
  std::set<DeviceNumber> denied;
  for (const auto& [board, devices] : numbers) {
    if (board != task.launch.board) denied.insert(devices.begin(), devices.end());
  }
  if (auto own = numbers.find(task.launch.board); own != numbers.end()) {
    for (const DeviceNumber& d : own->second) denied.erase(d);
  }
  if (denied.empty()) return Status::Ok();
  const std::vector<DeviceNumber> list(denied.begin(), denied.end());
  const Status s = options.cgroups != nullptr
                       ? options.cgroups->DenyDevices(task.launch.cgroup, list)
                       : FailedPrecondition("no cgroups");
  if (s.ok()) return s;
  return FailedPrecondition("cannot keep the task from other boards' device nodes: " + s.message() +
                            " (snn-agent --task_confine_devices=false runs tasks without)");
}

void TaskManager::RefreshDeviceFilters() {
  DeviceNumbers now = options_.confine_devices ? DeviceNumbersOf(boards_) : DeviceNumbers();
  if (now == device_numbers_) return;
  device_numbers_ = std::move(now);
  for (auto& [key, task] : tasks_) {
    if (task.ended() || task.stopping() || task.process.pid <= 0) continue;
    if (Status s = ConfineDevices(options_, task, device_numbers_); !s.ok()) {
      LOG(ERROR) << "task " << task.launch.cgroup << ": " << s.message();
      BeginStop(task, v1::TASK_KILLED, s.message());
    }
  }
}

}  // namespace snn
