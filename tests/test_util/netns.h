// A network namespace joined to this one by a veth pair, with /30 addresses under 10.231.0.0/16
// that exist only on this machine (unique per test process and `tag`). Cut takes the outer end
// of the link down: a real partition, no FIN or RST. Needs root and iproute2; ok() says whether
// it could be made. The destructor removes the link and the namespace.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace snn::testing {

class Namespace {
 public:
  explicit Namespace(int tag = 0) {
    const int id = (getpid() + tag * 7) % 200 + 20;
    const std::string suffix =
        std::to_string(getpid() % 100000) + (tag ? "t" + std::to_string(tag) : "");
    ns_ = "snn_part" + suffix;
    outer_ = "snnv" + suffix + "a";
    inner_ = "snnv" + suffix + "b";
    outer_ip_ = "10.231." + std::to_string(id) + ".1";
    inner_ip_ = "10.231." + std::to_string(id) + ".2";
    ok_ = Run("ip netns add " + ns_) == 0 &&
          Run("ip link add " + outer_ + " type veth peer name " + inner_) == 0 &&
          Run("ip link set " + inner_ + " netns " + ns_) == 0 &&
          Run("ip addr add " + outer_ip_ + "/30 dev " + outer_) == 0 &&
          Run("ip link set " + outer_ + " up") == 0 &&
          Run("ip netns exec " + ns_ + " ip addr add " + inner_ip_ + "/30 dev " + inner_) == 0 &&
          Run("ip netns exec " + ns_ + " ip link set " + inner_ + " up") == 0 &&
          Run("ip netns exec " + ns_ + " ip link set lo up") == 0;
  }
  ~Namespace() {
    Run("ip link del " + outer_);
    Run("ip netns del " + ns_);
  }
  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;

  bool ok() const { return ok_; }
  void Cut() { Run("ip link set " + outer_ + " down"); }
  void Heal() { Run("ip link set " + outer_ + " up"); }
  // A command prefix that runs a program inside the namespace.
  std::vector<std::string> Exec() const { return {"/usr/sbin/ip", "netns", "exec", ns_}; }
  const std::string& name() const { return ns_; }
  // This side's address on the link, and the namespace's.
  const std::string& outer_ip() const { return outer_ip_; }
  const std::string& inner_ip() const { return inner_ip_; }

 private:
  static int Run(const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str());
  }

  std::string ns_, outer_, inner_, outer_ip_, inner_ip_;
  bool ok_ = false;
};

}  // namespace snn::testing
