// Each task's processes in a cgroup of their own, with the job's memory and process limits, so
// that one task cannot exhaust the node for the others, and so that every process it started
// can be found and killed, even one that left the task's process group.
//
// cgroup v2 (the unified hierarchy, what systemd gives a service with Delegate=yes) is used when
// its memory and pids controllers are available; otherwise cgroup v1's memory and pids
// hierarchies. Under v2 the agent moves itself into a leaf ("agent") of its own cgroup, as the
// no-internal-processes rule requires, and puts tasks under "tasks-AGENT/NAME". Under v1 tasks go
// under "snn-AGENT/NAME" of the agent's cgroup in each hierarchy.
// Thread contract: agent io thread only.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/base/status.h"
#include "nodeagent/tasks/device_filter.h"

namespace snn {

struct CgroupLimits {
  uint64_t memory_bytes = 0;  // 0: unlimited
  uint64_t max_pids = 0;      // 0: unlimited
};

// The `agent_id` an agent's cgroups are named by: its node name and a hash of its data dir, so
// that two agents on one host never share them.
std::string AgentCgroupId(const std::string& node, const std::string& data_dir);

class TaskCgroups {
 public:
  enum class Version { kOff, kV1, kV2 };

  // mode: "auto" (v2, else v1, else off with the reason in `why_off`), "v2", "v1" (an error if
  // unusable) or "off". `fs_root` is where cgroup file systems are mounted (/sys/fs/cgroup).
  // `agent_id` names this agent's cgroups (AgentCgroupId).
  static Result<std::unique_ptr<TaskCgroups>> Open(const std::string& mode,
                                                   const std::string& agent_id,
                                                   const std::string& fs_root = "/sys/fs/cgroup");

  // Removes the agent's task cgroups if no task is left in them (tasks left running for the next
  // agent keep them).
  ~TaskCgroups();

  Version version() const { return version_; }
  // "cgroup v2 at /sys/fs/cgroup/...", "cgroup v1 (memory, pids)", "off: ..."
  std::string Describe() const;

  // Creates the task's cgroup (emptying and replacing a stale one of the same name) with its
  // limits. Nothing to do when off.
  Status Create(const std::string& name, const CgroupLimits& limits);
  // Moves `pid` (and its future children) into the task's cgroup.
  Status AddProcess(const std::string& name, pid_t pid);
  // SIGKILL to every process of the task's cgroup; true if there was none left.
  bool KillAll(const std::string& name);
  // Removes the task's cgroup once it is empty; false while processes remain.
  bool Remove(const std::string& name);
  // Keeps the task's processes from opening (reading, writing, creating) `devices`, from now
  // on; called again, the new list replaces the old one (under v1 it adds to it: a device number
  // once denied stays denied). An error when it cannot be done (no cgroups, no v1 devices
  // hierarchy, no eBPF): the task must not run.
  Status DenyDevices(const std::string& name, const std::vector<DeviceNumber>& devices);
  // Whether the kernel killed a process of the task for exceeding its memory limit.
  bool OomKilled(const std::string& name) const;
  // The names of the task cgroups under the agent's (those an agent killed with tasks running
  // left behind, among them).
  std::vector<std::string> Names() const;

 private:
  TaskCgroups(Version version, std::vector<std::string> bases, std::string why_off)
      : version_(version), bases_(std::move(bases)), why_off_(std::move(why_off)) {}
  // One directory per hierarchy (v2: one; v1: memory, pids, then devices when there is one).
  std::vector<std::string> DirsOf(const std::string& name) const;
  std::vector<pid_t> Processes(const std::string& name) const;

  const Version version_;
  const std::vector<std::string> bases_;
  const std::string why_off_;
  std::map<std::string, int> device_programs_;  // v2: each task's device filter (its fd)
};

}  // namespace snn
