// Keeping a task away from device nodes that are not its own (the USB boards of other tasks),
// by device number, in the task's cgroup: cgroup v1's devices controller (devices.deny), or on
// cgroup v2 an eBPF program of type BPF_PROG_TYPE_CGROUP_DEVICE attached to the cgroup (v2 has
// no devices controller; this is what runc and Slurm's cgroup/v2 plugin do). A path is looked
// up by its device number, so a second name for the same node (a udev symlink, a node made
// elsewhere) is denied as well.
// Thread contract: none (pure, apart from the system calls).
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "common/base/status.h"

namespace snn {

struct DeviceNumber {
  bool block = false;  // a block device; else a character device
  uint32_t major = 0, minor = 0;
  auto operator<=>(const DeviceNumber&) const = default;
};

// The device node at `path` (symlinks followed). NotFound when there is none (a board that is
// unplugged); InvalidArgument when the path is not a device node.
Result<DeviceNumber> DeviceAt(const std::string& path);
// "c 189:5": a line of cgroup v1's devices.deny, less the access ("rwm").
std::string DeviceRule(const DeviceNumber& device);

// Loads an eBPF program that refuses every access to `devices` and allows the rest; its file
// descriptor (the caller closes it). Needs CAP_BPF (root).
Result<int> LoadDeviceDenyProgram(const std::vector<DeviceNumber>& devices);
// Attaches program `prog_fd` to the cgroup v2 directory `dir` (beside any attached there), then
// detaches `replaced_fd` from it unless it is -1: the task is never without a program.
Status AttachDeviceProgram(const std::string& dir, int prog_fd, int replaced_fd);

}  // namespace snn
