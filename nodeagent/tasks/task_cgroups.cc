#include "nodeagent/tasks/task_cgroups.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "nodeagent/tasks/device_filter.h"

namespace snn {
namespace {

Status WriteControl(const std::string& file, const std::string& value) {
  std::ofstream out(file);
  if (!out) return Internal("cannot open " + file + ": " + std::strerror(errno));
  out << value;
  out.flush();
  if (!out)
    return Internal("cannot write '" + value + "' to " + file + ": " + std::strerror(errno));
  return Status::Ok();
}

std::string ReadControl(const std::string& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

Status MakeDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) return Status::Ok();
  return Internal("cannot create " + dir + ": " + std::strerror(errno));
}

// The agent's own cgroup in the hierarchy whose controllers include `controller` ("" for the
// v2 line "0::PATH").
std::string OwnCgroup(const std::string& controller) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (controller.empty()
            ? line.rfind("0::", 0) == 0
            : ("," + controllers + ",").find("," + controller + ",") != std::string::npos) {
      return path == "/" ? "" : path;
    }
  }
  return "";
}

// "key N" from a flat-keyed control file (memory.events, memory.oom_control).
uint64_t KeyedValue(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

std::string SafeName(const std::string& node) {
  std::string s = node;
  for (char& c : s) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return s;
}

bool HasWord(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

Result<std::string> OpenV2(const std::string& root, const std::string& agent) {
  const std::string controllers = ReadControl(root + "/cgroup.controllers");
  if (!HasWord(controllers, "memory") || !HasWord(controllers, "pids")) {
    return FailedPrecondition("cgroup v2 at " + root + " has no memory and pids controllers");
  }
  const std::string own = root + OwnCgroup("");
  if (own != root) {
    // No internal processes: the agent leaves its cgroup for a leaf, so that its cgroup can
    // hand the controllers down to the tasks' cgroups.
    SNN_RETURN_IF_ERROR(MakeDir(own + "/agent"));
    SNN_RETURN_IF_ERROR(WriteControl(own + "/agent/cgroup.procs", std::to_string(getpid())));
    SNN_RETURN_IF_ERROR(WriteControl(own + "/cgroup.subtree_control", "+memory +pids"));
  }
  const std::string base = own + "/tasks-" + SafeName(agent);
  SNN_RETURN_IF_ERROR(MakeDir(base));
  SNN_RETURN_IF_ERROR(WriteControl(base + "/cgroup.subtree_control", "+memory +pids"));
  return base;
}

Result<std::vector<std::string>> OpenV1(const std::string& root, const std::string& agent) {
  std::vector<std::string> bases;
  for (const std::string controller : {"memory", "pids"}) {
    const std::string mount = root + "/" + controller;
    if (!Exists(mount + "/tasks")) {
      return FailedPrecondition("no cgroup v1 " + controller + " hierarchy at " + mount);
    }
    const std::string base = mount + OwnCgroup(controller) + "/snn-" + SafeName(agent);
    SNN_RETURN_IF_ERROR(MakeDir(base));
    bases.push_back(base);
  }
  // Optional: without it no task may be kept from a device node (DenyDevices says so).
  const std::string devices = root + "/devices";
  if (Exists(devices + "/tasks")) {
    const std::string base = devices + OwnCgroup("devices") + "/snn-" + SafeName(agent);
    if (MakeDir(base).ok()) bases.push_back(base);
  }
  return bases;
}

}  // namespace

std::string AgentCgroupId(const std::string& node, const std::string& data_dir) {
  char hash[16];
  std::snprintf(hash, sizeof(hash), "%08zx", std::hash<std::string>()(data_dir) & 0xffffffff);
  return node + "-" + hash;
}

Result<std::unique_ptr<TaskCgroups>> TaskCgroups::Open(const std::string& mode,
                                                       const std::string& agent_id,
                                                       const std::string& fs_root) {
  auto make = [](Version v, std::vector<std::string> bases, std::string why) {
    return std::unique_ptr<TaskCgroups>(new TaskCgroups(v, std::move(bases), std::move(why)));
  };
  if (mode == "off") return make(Version::kOff, {}, "turned off (--cgroups=off)");
  if (mode != "auto" && mode != "v1" && mode != "v2") {
    return InvalidArgument("--cgroups is '" + mode + "'; use auto, v2, v1 or off");
  }
  std::string why;
  if (mode != "v1") {
    auto v2 = OpenV2(fs_root, agent_id);
    if (v2.ok()) return make(Version::kV2, {*v2}, "");
    if (mode == "v2") return v2.status();
    why = v2.status().message();
  }
  auto v1 = OpenV1(fs_root, agent_id);
  if (v1.ok()) return make(Version::kV1, std::move(v1).value(), "");
  if (mode == "v1") return v1.status();
  return make(Version::kOff, {}, why + "; " + v1.status().message());
}

TaskCgroups::~TaskCgroups() {
  for (const auto& [name, fd] : device_programs_) close(fd);
  for (const auto& base : bases_) rmdir(base.c_str());
}

std::string TaskCgroups::Describe() const {
  switch (version_) {
    case Version::kV2:
      return "cgroup v2 under " + bases_[0];
    case Version::kV1:
      return "cgroup v1 under " + bases_[0] + ", " + bases_[1] +
             (bases_.size() > 2 ? " and " + bases_[2] : " (no devices hierarchy)");
    case Version::kOff:
      break;
  }
  return "no cgroups: " + why_off_;
}

std::vector<std::string> TaskCgroups::DirsOf(const std::string& name) const {
  std::vector<std::string> dirs;
  for (const auto& base : bases_) dirs.push_back(base + "/" + name);
  return dirs;
}

Status TaskCgroups::Create(const std::string& name, const CgroupLimits& limits) {
  if (version_ == Version::kOff) return Status::Ok();
  const auto dirs = DirsOf(name);
  for (const auto& dir : dirs) SNN_RETURN_IF_ERROR(MakeDir(dir));
  const std::string memory = limits.memory_bytes ? std::to_string(limits.memory_bytes) : "max";
  const std::string pids = limits.max_pids ? std::to_string(limits.max_pids) : "max";
  if (version_ == Version::kV2) {
    SNN_RETURN_IF_ERROR(WriteControl(dirs[0] + "/memory.max", memory));
    // Swap would let the task past its memory limit; not every kernel has the file.
    if (Exists(dirs[0] + "/memory.swap.max")) (void)WriteControl(dirs[0] + "/memory.swap.max", "0");
    return WriteControl(dirs[0] + "/pids.max", pids);
  }
  SNN_RETURN_IF_ERROR(
      WriteControl(dirs[0] + "/memory.limit_in_bytes", limits.memory_bytes ? memory : "-1"));
  return WriteControl(dirs[1] + "/pids.max", pids);
}

Status TaskCgroups::AddProcess(const std::string& name, pid_t pid) {
  for (const auto& dir : DirsOf(name)) {
    SNN_RETURN_IF_ERROR(WriteControl(dir + "/cgroup.procs", std::to_string(pid)));
  }
  return Status::Ok();
}

std::vector<pid_t> TaskCgroups::Processes(const std::string& name) const {
  std::vector<pid_t> pids;
  for (const auto& dir : DirsOf(name)) {
    std::istringstream in(ReadControl(dir + "/cgroup.procs"));
    pid_t pid = 0;
    while (in >> pid) pids.push_back(pid);
  }
  return pids;
}

bool TaskCgroups::KillAll(const std::string& name) {
  const auto pids = Processes(name);
  for (pid_t pid : pids) {
    if (pid > 1) kill(pid, SIGKILL);
  }
  return pids.empty();
}

bool TaskCgroups::Remove(const std::string& name) {
  bool removed = true;
  for (const auto& dir : DirsOf(name)) {
    if (rmdir(dir.c_str()) != 0 && errno != ENOENT) removed = false;
  }
  if (removed) {
    auto program = device_programs_.find(name);
    if (program != device_programs_.end()) {
      close(program->second);
      device_programs_.erase(program);
    }
  }
  return removed;
}

Status TaskCgroups::DenyDevices(const std::string& name, const std::vector<DeviceNumber>& devices) {
  switch (version_) {
    case Version::kOff:
      if (devices.empty()) return Status::Ok();
      return FailedPrecondition("no cgroups (" + why_off_ + ") to keep it from " +
                                DeviceRule(devices[0]));
    case Version::kV1:
      if (devices.empty()) return Status::Ok();
      if (bases_.size() < 3) {
        return FailedPrecondition("no cgroup v1 devices hierarchy to keep it from " +
                                  DeviceRule(devices[0]));
      }
      for (const DeviceNumber& d : devices) {
        SNN_RETURN_IF_ERROR(
            WriteControl(DirsOf(name)[2] + "/devices.deny", DeviceRule(d) + " rwm"));
      }
      return Status::Ok();
    case Version::kV2:
      break;
  }
  auto old = device_programs_.find(name);
  if (devices.empty() && old == device_programs_.end()) return Status::Ok();
  auto loaded = LoadDeviceDenyProgram(devices);
  if (!loaded.ok()) return loaded.status();
  const int program = *loaded;
  const int replaced = old == device_programs_.end() ? -1 : old->second;
  if (Status s = AttachDeviceProgram(DirsOf(name)[0], program, replaced); !s.ok()) {
    close(program);
    return s;
  }
  if (replaced >= 0) close(replaced);
  device_programs_[name] = program;
  return Status::Ok();
}

std::vector<std::string> TaskCgroups::Names() const {
  std::vector<std::string> names;
  if (bases_.empty()) return names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(bases_[0], ec)) {
    if (entry.is_directory(ec)) names.push_back(entry.path().filename().string());
  }
  return names;
}

bool TaskCgroups::OomKilled(const std::string& name) const {
  if (version_ == Version::kOff) return false;
  const std::string dir = DirsOf(name)[0];
  if (version_ == Version::kV2)
    return KeyedValue(ReadControl(dir + "/memory.events"), "oom_kill") > 0;
  return KeyedValue(ReadControl(dir + "/memory.oom_control"), "oom_kill") > 0;
}

}  // namespace snn
