#include "common/daemon/job_file.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "common/base/array_spec.h"
#include "common/base/base64.h"
#include "common/base/board_constraint.h"
#include "common/base/cron_schedule.h"
#include "common/base/duration.h"
#include "common/base/file_util.h"
#include "common/base/job_validation.h"
#include "common/daemon/yaml_fields.h"

namespace snn {
namespace {

Status ParseEventResources(const YAML::Node& node, v1::Resources& r);

Status ParseResources(const YAML::Node& node, v1::Resources& r) {
  SNN_RETURN_IF_ERROR(CheckKnownFields(node, "task.resources",
                                       {"cores", "ksps", "units", "streams", "board_type", "model",
                                        "model_step_ms", "model_reset"}));
  if (node["model"]) {
    if (node["cores"]) {
      return InvalidArgument("task.resources: give cores or model, not both");
    }
    auto model = ReadString(node["model"], "task.resources.model");
    if (!model.ok()) return model.status();
    if (model->empty()) return InvalidArgument("task.resources.model is empty");
    r.set_model(*model);  // cores come from the model when the job is submitted
    if (node["model_step_ms"]) {
      double step = 0;
      try {
        step = node["model_step_ms"].as<double>();
      } catch (const YAML::Exception&) {
        step = -1;
      }
      if (!(step >= 0.001 && step <= 1000)) {
        return InvalidArgument(
            "task.resources.model_step_ms must be a step in ms from 0.001 "
            "to 1000 (e.g. 0.1)");
      }
      r.set_model_step_ms(step);
    }
    if (node["model_reset"]) {
      auto reset = ReadString(node["model_reset"], "task.resources.model_reset");
      if (!reset.ok()) return reset.status();
      if (*reset != "subtract" && *reset != "zero") {
        return InvalidArgument(
            "task.resources.model_reset is subtract or zero (how a NIR model's spiking layers "
            "without v_reset reset), not '" +
            reset->substr(0, 32) + "'");
      }
      r.set_model_reset(*reset);
    }
  } else if (node["model_step_ms"] || node["model_reset"]) {
    return InvalidArgument(std::string("task.resources.") +
                           (node["model_step_ms"] ? "model_step_ms" : "model_reset") +
                           " is about a model: give a model");
  } else if (!node["cores"]) {
    return InvalidArgument("task.resources.cores is required (or a model to derive it from)");
  }
  if (!node["ksps"] && !node["units"]) {
    return InvalidArgument(
        "task.resources.ksps (or units, normalized throughput on measured boards) is required");
  }
  if (node["ksps"] && node["units"]) {
    return InvalidArgument("task.resources: give ksps or units, not both");
  }
  const YAML::Node cores_node = node["cores"];
  if (!cores_node) return ParseEventResources(node, r);
  const std::string cores_text = cores_node.IsScalar() ? cores_node.as<std::string>() : "";
  if (cores_text.find_first_of("xX") != std::string::npos) {
    auto shape = ParseCoreRequest(cores_text);
    if (!shape.ok()) return InvalidArgument("task.resources." + shape.status().message());
    r.set_shape_width(shape->width);
    r.set_shape_height(shape->height);
    r.set_cores(shape->width * shape->height);
  } else {
    auto cores = ReadWholeNumber(cores_node, "task.resources.cores", 1, JobLimits::kMaxCores);
    if (!cores.ok()) return cores.status();
    r.set_cores(static_cast<uint32_t>(*cores));
  }
  return ParseEventResources(node, r);
}

// ksps, streams and board type: what a task asks of the board besides cores.
Status ParseEventResources(const YAML::Node& node, v1::Resources& r) {
  if (node["units"]) {
    auto units = ReadNumber(node["units"], "task.resources.units", 0, JobLimits::kMaxUnits);
    if (!units.ok()) return units.status();
    if (!(*units > 0)) return InvalidArgument("task.resources.units must be greater than 0");
    r.set_units(*units);
  } else {
    auto ksps = ReadWholeNumber(node["ksps"], "task.resources.ksps", 1, JobLimits::kMaxKsps);
    if (!ksps.ok()) return ksps.status();
    r.set_ksps(static_cast<uint32_t>(*ksps));
  }
  if (node["streams"]) {
    auto streams =
        ReadWholeNumber(node["streams"], "task.resources.streams", 1, JobLimits::kMaxStreams);
    if (!streams.ok()) return streams.status();
    r.set_streams(static_cast<uint32_t>(*streams));
  } else {
    r.set_streams(1);
  }
  if (node["board_type"]) {
    auto type = ReadString(node["board_type"], "task.resources.board_type");
    if (!type.ok()) return type.status();
    r.set_board_type(*type);
  }
  return Status::Ok();
}

// files: {NAME: text, NAME: {base64: ...}}: each file's content, as text or base64 (binary).
Status ParseFiles(const YAML::Node& files, v1::TaskSpec& task) {
  if (!files.IsMap()) {
    return InvalidArgument(
        "task.files must be a mapping of NAME: content (or NAME: {base64: ...})");
  }
  for (const auto& kv : files) {
    const std::string name = kv.first.as<std::string>();
    const std::string field = "task.files." + name;
    if (kv.second.IsMap()) {
      SNN_RETURN_IF_ERROR(CheckKnownFields(kv.second, field, {"base64"}));
      auto text = ReadString(kv.second["base64"], field + ".base64");
      if (!text.ok()) return text.status();
      auto bytes = DecodeBase64(*text);
      if (!bytes) return InvalidArgument(field + ".base64 is not base64 (RFC 4648, with padding)");
      (*task.mutable_files())[name] = std::move(*bytes);
    } else {
      auto text = ReadString(kv.second, field);
      if (!text.ok()) return text.status();
      (*task.mutable_files())[name] = *text;
    }
  }
  return Status::Ok();
}

// A session and a service run no command of their own; a step runs on its session's resources.
Status ParseTask(const YAML::Node& node, v1::TaskSpec& task, v1::JobKind kind) {
  const bool command_required = kind == v1::BATCH || kind == v1::STEP;
  SNN_RETURN_IF_ERROR(CheckKnownFields(
      node, "task",
      {"command", "args", "env", "workdir", "resources", "memory_mb", "max_processes", "files"}));
  if (!node["command"] && command_required) return InvalidArgument("task.command is required");
  auto command = node["command"] ? ReadString(node["command"], "task.command")
                                 : Result<std::string>(std::string());
  if (!command.ok()) return command.status();
  if (command->empty() && node["command"]) return InvalidArgument("task.command is empty");
  task.set_command(*command);
  if (const YAML::Node args = node["args"]) {
    if (!args.IsSequence()) return InvalidArgument("task.args must be a list");
    for (size_t i = 0; i < args.size(); ++i) {
      auto arg = ReadString(args[i], "task.args[" + std::to_string(i) + "]");
      if (!arg.ok()) return arg.status();
      task.add_args(*arg);
    }
  }
  if (const YAML::Node env = node["env"]) {
    if (!env.IsMap()) return InvalidArgument("task.env must be a mapping of NAME: value");
    for (const auto& kv : env) {
      const std::string key = kv.first.as<std::string>();
      auto value = ReadString(kv.second, "task.env." + key);
      if (!value.ok()) return value.status();
      (*task.mutable_env())[key] = *value;
    }
  }
  if (const YAML::Node files = node["files"]) {
    SNN_RETURN_IF_ERROR(ParseFiles(files, task));
  }
  if (node["workdir"]) {
    auto workdir = ReadString(node["workdir"], "task.workdir");
    if (!workdir.ok()) return workdir.status();
    task.set_workdir(*workdir);
  }
  if (node["memory_mb"]) {
    auto mb = ReadWholeNumber(node["memory_mb"], "task.memory_mb", 1, JobLimits::kMaxMemoryMb);
    if (!mb.ok()) return mb.status();
    task.set_memory_mb(static_cast<uint64_t>(*mb));
  }
  if (node["max_processes"]) {
    auto n =
        ReadWholeNumber(node["max_processes"], "task.max_processes", 1, JobLimits::kMaxProcesses);
    if (!n.ok()) return n.status();
    task.set_max_processes(static_cast<uint32_t>(*n));
  }
  if (!node["resources"] && kind == v1::STEP) return Status::Ok();  // its session's
  if (!node["resources"]) return InvalidArgument("task.resources is required");
  return ParseResources(node["resources"], *task.mutable_resources());
}

Status ParseReplicas(const YAML::Node& node, v1::JobSpec& spec) {
  const int64_t max = JobLimits::kMaxReplicas;
  if (node.IsScalar()) {
    auto n = ReadWholeNumber(node, "replicas", 1, max);
    if (!n.ok()) return n.status();
    spec.set_min_replicas(static_cast<uint32_t>(*n));
    spec.set_max_replicas(static_cast<uint32_t>(*n));
    return Status::Ok();
  }
  SNN_RETURN_IF_ERROR(CheckKnownFields(node, "replicas", {"min", "max", "spread"}));
  if (node["spread"]) {
    auto spread = ReadString(node["spread"], "replicas.spread");
    if (!spread.ok()) return spread.status();
    spec.set_spread(*spread);
  }
  if (!node["min"]) return InvalidArgument("replicas.min is required when replicas is a mapping");
  auto lo = ReadWholeNumber(node["min"], "replicas.min", 1, max);
  if (!lo.ok()) return lo.status();
  auto hi = node["max"] ? ReadWholeNumber(node["max"], "replicas.max", 1, max) : lo;
  if (!hi.ok()) return hi.status();
  spec.set_min_replicas(static_cast<uint32_t>(*lo));
  spec.set_max_replicas(static_cast<uint32_t>(*hi));
  return Status::Ok();
}

// kind: batch (the default), session (keepalive: how long it lives unrenewed), step (alloc:
// the session's job ID, alloc_task: its task) or service (service: {period_ms, tenants}).
Status ParseKind(const YAML::Node& root, v1::JobSpec& spec) {
  if (root["kind"]) {
    auto kind = ReadString(root["kind"], "kind");
    if (!kind.ok()) return kind.status();
    if (*kind == "batch") {
      spec.set_kind(v1::BATCH);
    } else if (*kind == "session") {
      spec.set_kind(v1::SESSION);
    } else if (*kind == "service") {
      spec.set_kind(v1::SERVICE);
    } else if (*kind == "step") {
      spec.set_kind(v1::STEP);
    } else {
      return InvalidArgument("kind '" + *kind + "' is not batch, session, step or service");
    }
  }
  // A step: the session it runs in, and which of its tasks (default 0).
  for (const char* field : {"alloc", "alloc_task"}) {
    if (!root[field]) continue;
    auto n = ReadWholeNumber(root[field], field, std::string(field) == "alloc" ? 1 : 0,
                             int64_t{1} << 32);
    if (!n.ok()) return n.status();
    if (std::string(field) == "alloc") spec.set_alloc(static_cast<uint64_t>(*n));
    if (std::string(field) == "alloc_task") spec.set_alloc_task(static_cast<uint32_t>(*n));
  }
  if (root["keepalive"]) {
    auto text = ReadString(root["keepalive"], "keepalive");
    if (!text.ok()) return text.status();
    auto seconds = ParseDurationSeconds(*text);
    if (!seconds.ok()) return InvalidArgument("keepalive: " + seconds.status().message());
    if (*seconds < 1 || *seconds > JobLimits::kMaxKeepaliveS) {
      return InvalidArgument("keepalive must be 1s to " +
                             std::to_string(JobLimits::kMaxKeepaliveS) + "s");
    }
    spec.set_keepalive_s(static_cast<uint32_t>(*seconds));
  }
  if (const YAML::Node service = root["service"]) {
    SNN_RETURN_IF_ERROR(CheckKnownFields(service, "service", {"period_ms", "tenants"}));
    v1::ServiceSpec& s = *spec.mutable_service();
    if (service["period_ms"]) {
      auto ms = ReadWholeNumber(service["period_ms"], "service.period_ms", 1, 60'000);
      if (!ms.ok()) return ms.status();
      s.set_period_ms(static_cast<uint32_t>(*ms));
    }
    if (const YAML::Node tenants = service["tenants"]) {
      if (!tenants.IsSequence())
        return InvalidArgument("service.tenants must be a list of tenants");
      for (size_t i = 0; i < tenants.size(); ++i) {
        auto t = ReadString(tenants[i], "service.tenants[" + std::to_string(i) + "]");
        if (!t.ok()) return t.status();
        s.add_tenants(*t);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

namespace {

// array, schedule, licenses and constraints: checked here, so that a typo is named before submit.
Status ParseArrayScheduleAndLicenses(const YAML::Node& root, v1::JobSpec& spec) {
  if (root["array"]) {
    // A job array: "0-999999%64" (common/base/array_spec.h).
    auto text = ReadString(root["array"], "array");
    if (!text.ok()) return text.status();
    auto array = ParseArraySpec(*text);
    if (!array.ok()) return array.status();
    *spec.mutable_array() = std::move(*array);
  }
  if (root["schedule"]) {
    // A recurring job: "0 3 * * *" (cron, UTC: common/base/cron_schedule.h).
    auto text = ReadString(root["schedule"], "schedule");
    if (!text.ok()) return text.status();
    if (auto cron = CronSchedule::Parse(*text); !cron.ok()) return cron.status();
    spec.set_schedule(*text);
  }
  if (root["licenses"]) {
    // Site-wide countable resources the job holds while it runs: {dvs-camera: 1}.
    auto licenses = ReadCountMap(root["licenses"], "licenses", 1'000'000, 16);
    if (!licenses.ok()) return licenses.status();
    spec.mutable_licenses()->insert(licenses->begin(), licenses->end());
  }
  if (root["constraints"]) {
    // Which boards may hold its tasks: checked here, so that a typo is named before submit.
    auto text = ReadString(root["constraints"], "constraints");
    if (!text.ok()) return text.status();
    if (auto parsed = BoardConstraint::Parse(*text); !parsed.ok()) return parsed.status();
    spec.mutable_task()->mutable_resources()->set_constraints(*text);
  }
  return Status::Ok();
}

// depends: {after_ok: [JOBID, ...], after_any: [...], after_not_ok: [...]}: start once every one
// of them completed, ended, or ended other than COMPLETED; after_corr: [ARRAY] element by element;
// singleton: true.
Status ParseDepends(const YAML::Node& depends, v1::JobSpec& spec) {
  if (!depends.IsMap() || depends.size() == 0) {
    return InvalidArgument(
        "depends must name after_ok, after_any, after_not_ok or after_corr (each a list of "
        "job IDs) or singleton: true");
  }
  SNN_RETURN_IF_ERROR(CheckKnownFields(
      depends, "depends", {"after_ok", "after_any", "after_not_ok", "after_corr", "singleton"}));
  if (const YAML::Node singleton = depends["singleton"]) {
    if (!singleton.IsScalar() ||
        (singleton.as<std::string>() != "true" && singleton.as<std::string>() != "false")) {
      return InvalidArgument("depends.singleton must be true or false");
    }
    spec.set_singleton(singleton.as<std::string>() == "true");
  }
  using Adder = void (v1::JobSpec::*)(uint64_t);
  const std::pair<const char*, Adder> kinds[] = {{"after_ok", &v1::JobSpec::add_after_ok},
                                                 {"after_any", &v1::JobSpec::add_after_any},
                                                 {"after_not_ok", &v1::JobSpec::add_after_not_ok},
                                                 {"after_corr", &v1::JobSpec::add_after_corr}};
  size_t total = 0;
  for (const auto& [name, add] : kinds) {
    const YAML::Node after = depends[name];
    if (!after) continue;
    const std::string field = std::string("depends.") + name;
    if (!after.IsSequence()) return InvalidArgument(field + " must be a list of job IDs");
    total += after.size();
    if (total > 64) return InvalidArgument("depends: at most 64 jobs in all");
    for (size_t i = 0; i < after.size(); ++i) {
      auto id =
          ReadWholeNumber(after[i], field + "[" + std::to_string(i) + "]", 1, int64_t{1} << 53);
      if (!id.ok()) return id.status();
      (spec.*add)(static_cast<uint64_t>(*id));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<v1::JobSpec> ParseJobYaml(const std::string& text, const std::string& default_name) {
  v1::JobSpec spec;
  try {
    auto loaded = LoadYamlDocument(text, "the job file");
    if (!loaded.ok()) return loaded.status();
    YAML::Node root = *loaded;
    if (!root || root.IsNull()) return InvalidArgument("the job file is empty");
    SNN_RETURN_IF_ERROR(CheckKnownFields(
        root, "the job file",
        {"name",      "tenant",     "pool",        "queue",          "priority",    "preemptible",
         "requeue",   "time_limit", "replicas",    "task",           "depends",     "kind",
         "keepalive", "service",    "alloc",       "alloc_task",     "constraints", "licenses",
         "array",     "schedule",   "reservation", "sets_attribute", "hold"}));
    SNN_RETURN_IF_ERROR(ParseKind(root, spec));
    spec.set_name(default_name);
    for (const char* field : {"name", "tenant", "pool", "queue", "reservation", "sets_attribute"}) {
      if (!root[field]) continue;
      auto value = ReadString(root[field], field);
      if (!value.ok()) return value.status();
      const std::string f = field;
      if (f == "name") spec.set_name(*value);
      if (f == "tenant") spec.set_tenant(*value);
      if (f == "pool") spec.set_pool(*value);
      if (f == "queue") spec.set_queue(*value);
      if (f == "reservation") spec.set_reservation(*value);  // an advance reservation's name
      if (f == "sets_attribute") spec.set_sets_attribute(*value);
    }
    if (root["priority"]) {
      auto p = ReadWholeNumber(root["priority"], "priority", 0, JobLimits::kMaxPriority);
      if (!p.ok()) return p.status();
      spec.set_priority(static_cast<int32_t>(*p));
    }
    for (const char* flag : {"preemptible", "requeue", "hold"}) {
      if (!root[flag]) continue;
      bool value = false;
      try {
        value = root[flag].as<bool>();
      } catch (const YAML::Exception&) {
        return InvalidArgument(std::string(flag) + " must be true or false");
      }
      if (std::string(flag) == "preemptible") spec.set_preemptible(value);
      if (std::string(flag) == "requeue") spec.set_no_requeue(!value);
      if (std::string(flag) == "hold") spec.set_hold(value);
    }
    if (root["time_limit"]) {
      auto text_limit = ReadString(root["time_limit"], "time_limit");
      if (!text_limit.ok()) return text_limit.status();
      auto seconds = ParseDurationSeconds(*text_limit);
      if (!seconds.ok()) return InvalidArgument("time_limit: " + seconds.status().message());
      spec.set_time_limit_s(*seconds);
    }
    if (root["replicas"]) {
      SNN_RETURN_IF_ERROR(ParseReplicas(root["replicas"], spec));
    } else {
      spec.set_min_replicas(1);
      spec.set_max_replicas(1);
    }
    if (const YAML::Node depends = root["depends"]) {
      SNN_RETURN_IF_ERROR(ParseDepends(depends, spec));
    }
    if (!root["task"]) return InvalidArgument("task is required");
    SNN_RETURN_IF_ERROR(ParseTask(root["task"], *spec.mutable_task(), spec.kind()));
    SNN_RETURN_IF_ERROR(ParseArrayScheduleAndLicenses(root, spec));
  } catch (const YAML::Exception& e) {
    return InvalidArgument("the job file is not valid YAML: " + e.msg + " (line " +
                           std::to_string(e.mark.line + 1) + ")");
  }
  // A model's cores are known only once snnctl knows the board type's neurons per core; a
  // step's resources are its session's, which the master fills in (and then checks it all).
  const bool resources_known = spec.task().resources().model().empty() &&
                               (spec.kind() != v1::STEP || spec.task().has_resources());
  if (resources_known) SNN_RETURN_IF_ERROR(ValidateJobSpec(spec));
  return spec;
}

Result<v1::JobSpec> LoadJobFile(const std::string& path) {
  auto text = ReadWholeFile(path, "job file");
  if (!text.ok()) return text.status();
  auto spec = ParseJobYaml(*text, std::filesystem::path(path).stem().string());
  if (!spec.ok()) return Status(spec.status().code(), path + ": " + spec.status().message());
  auto* r = spec->mutable_task()->mutable_resources();
  if (!r->model().empty() && r->model()[0] != '/') {  // relative to the job file
    r->set_model(std::filesystem::absolute(std::filesystem::path(path).parent_path() / r->model())
                     .lexically_normal()
                     .string());
  }
  return spec;
}

}  // namespace snn
