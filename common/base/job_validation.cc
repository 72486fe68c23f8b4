#include "common/base/job_validation.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "common/base/board_constraint.h"

namespace snn {
namespace {

// `s` with each NUL shown as \0, for a message.
std::string CEscapeNul(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '\0' ? std::string("\\0") : std::string(1, c);
  return out.substr(0, 128);
}

Status CheckRange(const char* field, uint64_t value, uint64_t lo, uint64_t hi) {
  if (value < lo || value > hi) {
    return InvalidArgument(std::string(field) + " is " + std::to_string(value) +
                           "; it must be between " + std::to_string(lo) + " and " +
                           std::to_string(hi));
  }
  return Status::Ok();
}

bool ValidName(const std::string& s) {
  for (char c : s) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  }
  return true;
}

}  // namespace

CoreRequest CoreRequestOf(const v1::Resources& r) {
  if (r.shape_width() > 0 && r.shape_height() > 0) {
    return CoreRequest{0, r.shape_width(), r.shape_height()};
  }
  return CoreRequest{r.cores(), 0, 0};
}

bool IsTerminalState(v1::JobState state) {
  return state == v1::COMPLETED || state == v1::FAILED || state == v1::CANCELLED ||
         state == v1::TIMEOUT;
}

uint32_t EffectiveKsps(const v1::BoardInfo& board) {
  return board.measured_ksps() > 0 ? std::min(board.ksps(), board.measured_ksps()) : board.ksps();
}

std::string FormatUnits(double units) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", units);
  return text;
}

bool AnyBoardType(const std::string& board_type) {
  return board_type.empty() || board_type == "any";
}

namespace {

// task.files: plain names in the working directory, few and small, where the task starts.
Status ValidateFiles(const v1::TaskSpec& task) {
  if (task.files().empty()) return Status::Ok();
  if (!task.workdir().empty()) {
    return InvalidArgument(
        "task.files are written into the task's own working directory: leave task.workdir "
        "unset, or put the files where the workdir is");
  }
  if (task.files_size() > static_cast<int>(JobLimits::kMaxFiles)) {
    return InvalidArgument("task.files has " + std::to_string(task.files_size()) +
                           " files; at most " + std::to_string(JobLimits::kMaxFiles));
  }
  size_t bytes = 0;
  for (const auto& [name, content] : task.files()) {
    if (name.empty() || name.size() > JobLimits::kMaxFileNameBytes || name[0] == '.' ||
        !ValidName(name)) {
      return InvalidArgument("task.files has the name '" + CEscapeNul(name.substr(0, 64)) +
                             "': a file's name is letters, digits, '.', '_' and '-', not "
                             "starting with '.' (no directories), at most " +
                             std::to_string(JobLimits::kMaxFileNameBytes) + " bytes");
    }
    bytes += content.size();
  }
  if (bytes > JobLimits::kMaxFilesBytes) {
    return InvalidArgument("task.files hold " + std::to_string(bytes) + " bytes; at most " +
                           std::to_string(JobLimits::kMaxFilesBytes) +
                           " (put larger inputs on a file system the nodes share)");
  }
  return Status::Ok();
}

// Not over a job's bounds (naming what makes it big); its names.
Status CheckSizeAndNames(const v1::JobSpec& spec) {
  const size_t network_bytes = spec.task().network().ByteSizeLong();
  if (network_bytes > JobLimits::kMaxNetworkBytes) {
    return InvalidArgument("the model's network is " + std::to_string(network_bytes) +
                           " bytes; at most " + std::to_string(JobLimits::kMaxNetworkBytes) +
                           " are accepted");
  }
  if (const size_t bytes = spec.ByteSizeLong() - network_bytes; bytes > JobLimits::kMaxSpecBytes) {
    // Name what makes it big, so that the error points at the field to shrink.
    size_t args = 0, env = 0;
    for (const auto& a : spec.task().args()) args += a.size();
    for (const auto& [k, v] : spec.task().env()) env += k.size() + v.size();
    const size_t command = spec.task().command().size(), name = spec.name().size();
    const size_t named = args + env + command + name;
    std::vector<std::pair<size_t, std::string>> parts = {
        {args, "task.args"},
        {env, "task.env"},
        {command, "task.command"},
        {name, "name"},
        {bytes > named ? bytes - named : 0, "the other fields"}};
    std::sort(parts.rbegin(), parts.rend());
    return InvalidArgument("the job is " + std::to_string(bytes) + " bytes, most of them in " +
                           parts[0].second + " (" + std::to_string(parts[0].first) +
                           " bytes); at most " + std::to_string(JobLimits::kMaxSpecBytes) +
                           " are accepted");
  }
  for (unsigned char c : spec.name()) {
    if (c < 0x20 || c == 0x7f) {
      return InvalidArgument("name may not hold control characters (newlines, escape codes)");
    }
  }
  if (!spec.spread().empty() && spec.spread() != "pack" && spec.spread() != "spread") {
    return InvalidArgument("replicas.spread is '" + spec.spread().substr(0, 64) +
                           "'; use pack (replicas close together) or spread (far apart)");
  }
  if (spec.name().size() > JobLimits::kMaxNameBytes) {
    return InvalidArgument("name is longer than " + std::to_string(JobLimits::kMaxNameBytes) +
                           " bytes");
  }
  if (!ValidName(spec.tenant()) || !ValidName(spec.pool()) || !ValidName(spec.queue()) ||
      !ValidName(spec.reservation()) || spec.reservation().size() > 64) {
    return InvalidArgument(
        "tenant, pool, queue and reservation may use only letters, digits, '-', '_', '.'");
  }
  if (!spec.sets_attribute().empty()) {
    if (Status s = CheckBoardAttribute(spec.sets_attribute(), ""); !s.ok()) {
      return InvalidArgument("sets_attribute: " + s.message());
    }
    if (spec.kind() != v1::BATCH) {
      return InvalidArgument(
          "sets_attribute: only a batch job sets a board attribute, when it completes");
    }
  }
  return Status::Ok();
}

// Its priority, time limit, replicas, licenses and constraints.
Status CheckCounts(const v1::JobSpec& spec) {
  if (spec.priority() < 0 || spec.priority() > JobLimits::kMaxPriority) {
    return InvalidArgument("priority is " + std::to_string(spec.priority()) +
                           "; it must be between 0 and " + std::to_string(JobLimits::kMaxPriority));
  }
  if (spec.time_limit_s() > JobLimits::kMaxTimeLimitS) {
    return InvalidArgument("time_limit is above the maximum of 365 days");
  }
  SNN_RETURN_IF_ERROR(CheckRange("replicas.min", spec.min_replicas(), 1, JobLimits::kMaxReplicas));
  SNN_RETURN_IF_ERROR(CheckRange("replicas.max", spec.max_replicas(), 1, JobLimits::kMaxReplicas));
  if (spec.max_replicas() < spec.min_replicas()) {
    return InvalidArgument("replicas.max (" + std::to_string(spec.max_replicas()) +
                           ") is below replicas.min (" + std::to_string(spec.min_replicas()) + ")");
  }
  if (spec.licenses_size() > 16) return InvalidArgument("licenses: at most 16 kinds in one job");
  for (const auto& [name, count] : spec.licenses()) {
    if (name.empty() || name.size() > 64 || !ValidName(name)) {
      return InvalidArgument("licenses: a name is 1 to 64 letters, digits, '-', '_', '.'");
    }
    SNN_RETURN_IF_ERROR(CheckRange(("licenses." + name).c_str(), count, 1, 1'000'000));
  }
  if (const std::string& c = spec.task().resources().constraints(); !c.empty()) {
    if (auto parsed = BoardConstraint::Parse(c); !parsed.ok()) return parsed.status();
  }
  return Status::Ok();
}

// What its kind (batch, session, service, step) asks of it.
Status CheckKind(const v1::JobSpec& spec) {
  const auto& task = spec.task();
  if (spec.kind() == v1::SESSION) {
    // A session runs nothing itself: its steps do.
    if (!task.command().empty()) {
      return InvalidArgument(
          "a session runs no command itself: start steps in it with snnctl run --alloc ID");
    }
  } else if (spec.kind() == v1::SERVICE) {
    if (!task.command().empty()) {
      return InvalidArgument(
          "an experiment service runs no command: its agents run the experiments users send "
          "(snnctl experiment submit)");
    }
    if (spec.service().period_ms() > 60'000) {
      return InvalidArgument("service.period_ms is above the maximum of 60000 (one minute)");
    }
    for (const auto& t : spec.service().tenants()) {
      if (t.empty() || t.size() > 64) {
        return InvalidArgument("service.tenants: a tenant name is 1 to 64 characters");
      }
    }
  } else if (task.command().empty()) {
    return InvalidArgument("task.command is required");
  }
  if (spec.kind() == v1::STEP && spec.alloc() == 0) {
    return InvalidArgument("a step names the session it runs in (alloc: its job ID)");
  }
  if (spec.kind() != v1::STEP && spec.alloc() != 0) {
    return InvalidArgument("alloc names a session: only a step runs in one");
  }
  if (spec.kind() != v1::SERVICE && spec.has_service()) {
    return InvalidArgument("service: is an experiment service's (kind: service)");
  }
  if (spec.kind() != v1::SESSION && spec.keepalive_s() != 0) {
    return InvalidArgument("keepalive is a session's: only a session is renewed");
  }
  if (spec.keepalive_s() > JobLimits::kMaxKeepaliveS) {
    return InvalidArgument("keepalive is above the maximum of " +
                           std::to_string(JobLimits::kMaxKeepaliveS) + " s");
  }
  return Status::Ok();
}

// The task's command, arguments, directory, environment and files.
Status CheckTaskText(const v1::TaskSpec& task) {
  // A C string ends at its first NUL: what would run is not what was submitted.
  const auto has_nul = [](const std::string& s) { return s.find('\0') != std::string::npos; };
  if (has_nul(task.command())) return InvalidArgument("task.command holds a NUL character");
  for (int i = 0; i < task.args_size(); ++i) {
    if (has_nul(task.args(i))) {
      return InvalidArgument("task.args[" + std::to_string(i) + "] holds a NUL character");
    }
  }
  if (has_nul(task.workdir())) return InvalidArgument("task.workdir holds a NUL character");
  if (!task.workdir().empty() && task.workdir()[0] != '/') {
    return InvalidArgument("task.workdir must be an absolute path (it is '" +
                           task.workdir().substr(0, 128) + "')");
  }
  if (task.args_size() > static_cast<int>(JobLimits::kMaxArgs)) {
    return InvalidArgument("task.args has more than " + std::to_string(JobLimits::kMaxArgs) +
                           " entries");
  }
  if (task.env_size() > static_cast<int>(JobLimits::kMaxEnv)) {
    return InvalidArgument("task.env has more than " + std::to_string(JobLimits::kMaxEnv) +
                           " entries");
  }
  for (const auto& [key, value] : task.env()) {
    if (key.empty() || key.find('=') != std::string::npos || has_nul(key)) {
      return InvalidArgument("task.env has a bad variable name '" + CEscapeNul(key) + "'");
    }
    if (has_nul(value)) {
      return InvalidArgument("task.env." + key + " holds a NUL character");
    }
    if (key.rfind("SNN_", 0) == 0) {
      return InvalidArgument("task.env may not set " + key +
                             ": SNN_* variables are set by the agent");
    }
  }
  SNN_RETURN_IF_ERROR(ValidateFiles(task));
  return Status::Ok();
}

// What the task asks for: memory, processes, cores, spikes, streams, shape.
Status CheckTaskResources(const v1::TaskSpec& task) {
  SNN_RETURN_IF_ERROR(CheckRange("task.memory_mb", task.memory_mb(), 0, JobLimits::kMaxMemoryMb));
  SNN_RETURN_IF_ERROR(
      CheckRange("task.max_processes", task.max_processes(), 0, JobLimits::kMaxProcesses));
  const auto& r = task.resources();
  SNN_RETURN_IF_ERROR(CheckRange("task.resources.cores", r.cores(), 1, JobLimits::kMaxCores));
  if (!(r.units() >= 0 && r.units() <= JobLimits::kMaxUnits)) {
    return InvalidArgument("task.resources.units must be between 0 and " +
                           std::to_string(static_cast<int>(JobLimits::kMaxUnits)));
  }
  // With units, ksps is the master's to set (0 until it has): one or the other is asked for.
  SNN_RETURN_IF_ERROR(
      CheckRange("task.resources.ksps", r.ksps(), r.units() > 0 ? 0 : 1, JobLimits::kMaxKsps));
  SNN_RETURN_IF_ERROR(CheckRange("task.resources.streams", r.streams(), 1, JobLimits::kMaxStreams));
  if ((r.shape_width() > 0) != (r.shape_height() > 0)) {
    return InvalidArgument("task.resources shape needs both a width and a height");
  }
  if (r.shape_width() > 0) {
    if (r.shape_width() > 256 || r.shape_height() > 256) {
      return InvalidArgument("task.resources shape has a side above 256, the largest mesh");
    }
    if (r.shape_width() * r.shape_height() != r.cores()) {
      return InvalidArgument("task.resources.cores must equal the shape's width x height");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateJobSpec(const v1::JobSpec& spec) {
  SNN_RETURN_IF_ERROR(CheckSizeAndNames(spec));
  SNN_RETURN_IF_ERROR(CheckCounts(spec));
  SNN_RETURN_IF_ERROR(CheckKind(spec));
  SNN_RETURN_IF_ERROR(CheckTaskText(spec.task()));
  SNN_RETURN_IF_ERROR(CheckTaskResources(spec.task()));
  return Status::Ok();
}

}  // namespace snn
