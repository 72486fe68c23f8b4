// The environment a task starts with, built like Slurm's and never the agent's own: the node's
// base (PATH, from snn-agent --task_path), the identity of the user it runs as from the password
// database (USER, LOGNAME, HOME, SHELL), the board type's runtime set-up, the job's own variables
// (task.env, which may override all of these), then the SNN_* variables that tell the task who
// and where it is (its ids, board, cores, budget, mapping file and, with a gateway, how to reach
// it).
// Pure; thread-safe.
#pragma once

#include <map>
#include <string>

#include "common/daemon/board_config.h"
#include "proto/node.pb.h"

namespace snn {

struct TaskEnvContext {
  const std::map<std::string, std::string>* base_env = nullptr;  // SNN_* in it are dropped
  // The user the task runs as; empty fields are left out.
  std::string user, home, shell;
  const BoardRuntime* runtime = nullptr;  // the board type's set-up; may be null
  std::string node_name;
  std::string board_type;
  std::string gateway_socket;  // empty: no gateway, and no SNN_GATEWAY*
  // The file holding the task's gateway token, readable by the task's user alone: never the
  // token itself, which the environment would show to whoever may read /proc/PID/environ.
  std::string gateway_token_file;
  std::string model_file;      // the job's network as JSON; empty: the job has no model
  std::string checkpoint_dir;  // the task's, across attempts; empty: checkpoints are off
  std::string output_dir;      // where the task leaves its results (snnctl results)
};

std::map<std::string, std::string> TaskEnvironment(const TaskEnvContext& context,
                                                   const v1::LaunchRequest& request,
                                                   const v1::TaskMapping& mapping);

}  // namespace snn
