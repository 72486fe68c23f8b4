#include "nodeagent/tasks/task_env.h"

namespace snn {
namespace {

std::string Join(const google::protobuf::RepeatedField<uint32_t>& values) {
  std::string s;
  for (uint32_t v : values) s += (s.empty() ? "" : ",") + std::to_string(v);
  return s;
}

std::string CoresText(const v1::TaskMapping& mapping) {
  std::string s;
  for (const auto& c : mapping.cores()) {
    s += (s.empty() ? "" : ";") + std::to_string(c.x()) + "," + std::to_string(c.y());
  }
  return s;
}

}  // namespace

std::map<std::string, std::string> TaskEnvironment(const TaskEnvContext& context,
                                                   const v1::LaunchRequest& req,
                                                   const v1::TaskMapping& mapping) {
  std::map<std::string, std::string> env;
  if (context.base_env != nullptr) env = *context.base_env;
  for (auto it = env.begin(); it != env.end();) {
    it = it->first.rfind("SNN_", 0) == 0 ? env.erase(it) : std::next(it);
  }
  if (!context.user.empty()) env["USER"] = env["LOGNAME"] = context.user;
  if (!context.home.empty()) env["HOME"] = context.home;
  if (!context.shell.empty()) env["SHELL"] = context.shell;
  // The board type's runtime set-up first, so that the job's own env can override it.
  const BoardRuntime* runtime = context.runtime;
  if (runtime != nullptr) {
    for (const auto& [k, v] : runtime->env) env[k] = v;
  }
  for (const auto& [k, v] : req.task().env()) env[k] = v;
  if (runtime != nullptr && !runtime->library_paths.empty()) {
    std::string paths;
    for (const auto& dir : runtime->library_paths) paths += (paths.empty() ? "" : ":") + dir;
    const std::string rest = env["LD_LIBRARY_PATH"];
    env["LD_LIBRARY_PATH"] = rest.empty() ? paths : paths + ":" + rest;
  }
  env["SNN_JOB_ID"] = std::to_string(req.tenant_job_id());
  env["SNN_GLOBAL_JOB_ID"] = std::to_string(req.job_id());
  env["SNN_TENANT"] = req.tenant();
  env["SNN_TASK_ID"] = std::to_string(req.index());
  env["SNN_ATTEMPT"] = std::to_string(req.attempt());
  env["SNN_NODE"] = context.node_name;
  env["SNN_BOARD"] = std::to_string(req.board());
  env["SNN_BOARD_TYPE"] = context.board_type;
  env["SNN_MAX_KSPS"] = std::to_string(req.task().resources().ksps());
  env["SNN_ROUTER_CHANNEL"] = Join(mapping.router_channels());
  env["SNN_PULSE_INPUT_QUEUE_ID"] = std::to_string(mapping.pulse_input_queue());
  env["SNN_CORES"] = CoresText(mapping);
  env["SNN_NUM_CORES"] = std::to_string(mapping.cores_size());
  const auto& r = mapping.rect();
  env["SNN_CORE_RECT"] = std::to_string(r.width()) + "x" + std::to_string(r.height()) + "@" +
                         std::to_string(r.x()) + "," + std::to_string(r.y());
  env["SNN_MAPPING_FILE"] = mapping.mapping_file();
  if (!context.model_file.empty()) env["SNN_MODEL"] = context.model_file;
  if (!context.checkpoint_dir.empty()) env["SNN_CHECKPOINT_DIR"] = context.checkpoint_dir;
  if (!context.output_dir.empty()) env["SNN_OUTPUT_DIR"] = context.output_dir;
  // As Slurm's SLURM_RESTART_COUNT: how many times the job ran before this attempt.
  env["SNN_RESTART_COUNT"] = std::to_string(req.attempt() > 0 ? req.attempt() - 1 : 0);
  if (!context.gateway_socket.empty()) {
    env["SNN_GATEWAY"] = context.gateway_socket;
    env["SNN_GATEWAY_TOKEN_FILE"] = context.gateway_token_file;
  }
  return env;
}

}  // namespace snn
