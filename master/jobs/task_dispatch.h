// Tells the agents what the master decided about tasks: launches and kills, each sent only once
// the change that asks for it is durable (so a master that dies in between never has a task
// running that its store does not know). Owns the AgentChannel, and the launches sent and not
// yet answered: a launch may reach an agent after it registered, and its answer settles it.
// Thread contract: only on the master's io thread; answers come back on it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "master/jobs/agent_channel.h"
#include "master/jobs/job_table.h"
#include "master/store/journal.h"

namespace snn {

using TaskId = std::tuple<uint64_t, uint32_t, uint32_t>;  // job, index, attempt

class TaskDispatch {
 public:
  // `on_answer` gets each agent's answer to a launch (its task's status, or the refusal as a
  // TASK_LOST or TASK_LAUNCH_FAILED status); the journal is committed after it.
  using AnswerHandler = std::function<void(const std::string& node, const v1::TaskStatus&)>;
  TaskDispatch(JobTable& jobs, AgentChannel& agents, Journal& journal)
      : jobs_(jobs), agents_(agents), journal_(journal) {}
  void set_on_answer(AnswerHandler on_answer) { on_answer_ = std::move(on_answer); }

  // Once durable: launches task `index` of `job`'s current attempt, if it is still launching.
  void LaunchWhenDurable(const v1::JobRecord& job, uint32_t index);
  // Once durable: kills one task attempt on `node`.
  void KillWhenDurable(const std::string& node, const TaskId& task, const std::string& reason);
  // Once durable: kills every launching or running task of `job`.
  void KillActiveTasks(const v1::JobRecord& job, const std::string& reason);
  // The tasks launched on `node`'s current session and not answered yet: its registration
  // cannot tell about them, their answers will.
  std::set<TaskId> UnansweredOnCurrentSession(const std::string& node) const;

 private:
  void SendLaunch(const TaskId& task);
  void OnLaunchAnswer(const std::string& node, const TaskId& task,
                      const Result<v1::LaunchResponse>& answer);

  // Constant after construction.
  JobTable& jobs_;
  AgentChannel& agents_;
  Journal& journal_;
  AnswerHandler on_answer_;
  // Launches sent and not yet answered, with the node's session epoch they went on.
  std::map<TaskId, uint64_t> launches_in_flight_;
};

}  // namespace snn
