// Who still holds a board's device nodes when its allocation ends. A task may hand an open
// descriptor of its board's device to another process of its user, outside the task (over a Unix
// socket, say), which would read the board after the job ended: the cgroup's device filter
// stops opening, not holding. So when a board is released, every process not run as root that
// holds one of its device nodes open (the node's path and its device number both match) is
// killed; root's are the system's own (the agent, drivers that keep a device open).
// Reads /proc; thread-compatible.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace snn {

struct DeviceHolder {
  pid_t pid = 0;
  uid_t uid = 0;
  std::string device;  // the path it holds open
};

// The processes under `proc` ("/proc") holding one of `paths` (character or block devices)
// open, root's left out.
std::vector<DeviceHolder> FindDeviceHolders(const std::vector<std::string>& paths,
                                            const std::string& proc = "/proc");

// Kills (SIGKILL) every holder FindDeviceHolders finds; returns them.
std::vector<DeviceHolder> KillDeviceHolders(const std::vector<std::string>& paths);

}  // namespace snn
