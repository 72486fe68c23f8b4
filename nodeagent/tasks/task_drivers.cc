// The driver side of the task manager: a task on a board that a driver process runs has the
// board reserved before its command runs (the reservation's environment joins the command's),
// and when it ends the board is released (scrubbed) and its health checked, all off the io
// thread (DriverPool); the answers come back at the next Poll.
#include <glog/logging.h>
#include <signal.h>

#include "common/base/split.h"
#include "common/daemon/board_drivers.h"
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

void TaskManager::ReserveBoard(const Task& task, const RunAs& who) {
  const v1::LaunchRequest& req = task.launch.request;
  const BoardDriverRef& via = *boards_.board(task.launch.board)->driver();
  v1::DriverRequest request;
  request.set_board(via.board);
  auto* reserve = request.mutable_reserve();
  reserve->set_task(TaskName(req));
  reserve->set_ksps(task.launch.resources.ksps());
  reserve->set_uid(who.uid);
  reserve->set_gid(who.gid);
  options_.drivers->Call(
      via.driver, std::move(request),
      [this, key = task.launch.key, token = task.launch.gateway_token](
          Result<v1::DriverResponse> answer) { OnReserved(key, token, std::move(answer)); });
}

void TaskManager::OnReserved(const TaskKey& key, const std::string& token,
                             Result<v1::DriverResponse> answer) {
  auto it = tasks_.find(key);
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
  // Its network is its boards' endpoints, relayed by its shepherd (board_relay.h).
  task.process.start.isolate_network = options_.isolate_boards;
  task.process.start.relay.assign(reservation.endpoints().begin(), reservation.endpoints().end());
  StartHeld(task);
}

void TaskManager::ReleaseDriverBoard(const Task& task) {
  const Board* board = boards_.board(task.launch.board);
  if (board == nullptr || board->driver() == nullptr || options_.drivers == nullptr) return;
  const BoardDriverRef& via = *board->driver();
  v1::DriverRequest request;
  request.set_board(via.board);
  request.mutable_release()->set_task(TaskName(task.launch.request));
  const uint32_t index = task.launch.board;
  options_.drivers->Call(via.driver, std::move(request),
                         [this, index](Result<v1::DriverResponse> answer) {
                           if (!answer.ok()) {
                             auto* b = dynamic_cast<DriverBoard*>(boards_.board(index));
                             if (b != nullptr) {
                               b->SetHealth(false, "release failed: " + answer.status().message());
                               if (on_boards_changed_) on_boards_changed_();
                             }
                             return;
                           }
                           CheckDriverBoard(index);
                         });
}

void TaskManager::CheckDriverBoard(uint32_t index) {
  auto* board = dynamic_cast<DriverBoard*>(boards_.board(index));
  if (board == nullptr) return;
  v1::DriverRequest request;
  request.set_board(board->driver()->board);
  request.mutable_health_check();
  options_.drivers->Call(board->driver()->driver, std::move(request),
                         [this, index](Result<v1::DriverResponse> answer) {
                           auto* b = dynamic_cast<DriverBoard*>(boards_.board(index));
                           if (b == nullptr) return;
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
