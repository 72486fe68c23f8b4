#include "nodeagent/boards/device_holders.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>

namespace snn {

std::vector<DeviceHolder> FindDeviceHolders(const std::vector<std::string>& paths,
                                            const std::string& proc) {
  std::map<std::string, dev_t> wanted;  // path -> device number
  for (const std::string& path : paths) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
      wanted[path] = st.st_rdev;
    }
  }
  std::vector<DeviceHolder> out;
  if (wanted.empty()) return out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc, ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat owner {};
    if (stat(entry.path().c_str(), &owner) != 0 || owner.st_uid == 0) continue;
    std::error_code fd_ec;
    for (const auto& fd : std::filesystem::directory_iterator(entry.path() / "fd", fd_ec)) {
      std::error_code link_ec;
      const std::string target = std::filesystem::read_symlink(fd.path(), link_ec);
      auto it = wanted.find(target);
      if (link_ec || it == wanted.end()) continue;
      struct stat held {};  // the open file itself: the same device, not just the same name
      if (stat(fd.path().c_str(), &held) != 0 || held.st_rdev != it->second) continue;
      out.push_back(DeviceHolder{static_cast<pid_t>(std::stol(name)), owner.st_uid, target});
      break;
    }
  }
  return out;
}

std::vector<DeviceHolder> KillDeviceHolders(const std::vector<std::string>& paths) {
  std::vector<DeviceHolder> holders = FindDeviceHolders(paths);
  for (const DeviceHolder& h : holders) kill(h.pid, SIGKILL);
  return holders;
}

}  // namespace snn
