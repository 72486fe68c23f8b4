#include "nodeagent/tasks/device_filter.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace snn {
namespace {

long Bpf(int cmd, union bpf_attr* attr) { return syscall(__NR_bpf, cmd, attr, sizeof(*attr)); }

bpf_insn Insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn insn{};
  insn.code = code;
  insn.dst_reg = dst;
  insn.src_reg = src;
  insn.off = off;
  insn.imm = imm;
  return insn;
}

}  // namespace

Result<DeviceNumber> DeviceAt(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return NotFound("no device node at " + path);
    return Internal("cannot look at " + path + ": " + std::strerror(errno));
  }
  if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
    return InvalidArgument(path + " is not a device node");
  }
  return DeviceNumber{S_ISBLK(st.st_mode), major(st.st_rdev), minor(st.st_rdev)};
}

std::string DeviceRule(const DeviceNumber& device) {
  return std::string(device.block ? "b " : "c ") + std::to_string(device.major) + ":" +
         std::to_string(device.minor);
}

Result<int> LoadDeviceDenyProgram(const std::vector<DeviceNumber>& devices) {
  // r1 is the struct bpf_cgroup_dev_ctx: access_type (type in the low 16 bits), major, minor.
  std::vector<bpf_insn> prog = {
      Insn(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_2, BPF_REG_1, 0, 0),
      Insn(BPF_ALU | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xFFFF),
      Insn(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_3, BPF_REG_1, 4, 0),
      Insn(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_4, BPF_REG_1, 8, 0),
  };
  for (const DeviceNumber& d : devices) {
    // Not this device: on to the next one (four instructions on); this one: refused.
    const int32_t type = d.block ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
    prog.push_back(Insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, 4, type));
    prog.push_back(Insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_3, 0, 3, static_cast<int32_t>(d.major)));
    prog.push_back(Insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_4, 0, 2, static_cast<int32_t>(d.minor)));
    prog.push_back(Insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0));
    prog.push_back(Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  }
  prog.push_back(Insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1));
  prog.push_back(Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  static const char kLicense[] = "GPL";
  union bpf_attr attr {};
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = reinterpret_cast<uintptr_t>(prog.data());
  attr.insn_cnt = static_cast<uint32_t>(prog.size());
  attr.license = reinterpret_cast<uintptr_t>(kLicense);
  const long fd = Bpf(BPF_PROG_LOAD, &attr);
  if (fd < 0) {
    return FailedPrecondition(std::string("cannot load a device filter (eBPF): ") +
                              std::strerror(errno));
  }
  return static_cast<int>(fd);
}

Status AttachDeviceProgram(const std::string& dir, int prog_fd, int replaced_fd) {
  const int cgroup = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgroup < 0) return Internal("cannot open " + dir + ": " + std::strerror(errno));
  union bpf_attr attr {};
  attr.target_fd = static_cast<uint32_t>(cgroup);
  attr.attach_bpf_fd = static_cast<uint32_t>(prog_fd);
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  if (Bpf(BPF_PROG_ATTACH, &attr) != 0) {
    const int e = errno;
    close(cgroup);
    return FailedPrecondition("cannot attach a device filter to " + dir + ": " + std::strerror(e));
  }
  if (replaced_fd >= 0) {
    union bpf_attr detach {};
    detach.target_fd = static_cast<uint32_t>(cgroup);
    detach.attach_bpf_fd = static_cast<uint32_t>(replaced_fd);
    detach.attach_type = BPF_CGROUP_DEVICE;
    (void)Bpf(BPF_PROG_DETACH, &detach);  // both refuse what the old one did: still confined
  }
  close(cgroup);
  return Status::Ok();
}

}  // namespace snn
