#include "tests/test_util/etcd_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/base/clock.h"
#include "tests/test_util/process.h"

namespace snn::testing {

namespace {
constexpr char kEtcd[] = "/usr/bin/etcd";
constexpr char kEtcdctl[] = "/usr/bin/etcdctl";

int RunQuiet(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t pid = SpawnLogged(argv, log, log);
  if (pid < 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
}  // namespace

uint16_t FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

bool EtcdCluster::Available() { return access(kEtcd, X_OK) == 0 && access(kEtcdctl, X_OK) == 0; }

EtcdCluster::EtcdCluster(std::string dir, int members, std::string extra_host, Tls tls)
    : dir_(std::move(dir)), extra_host_(std::move(extra_host)), tls_(std::move(tls)) {
  for (int i = 0; i < members; ++i) {
    client_ports_.push_back(FreeLoopbackPort());
    peer_ports_.push_back(FreeLoopbackPort());
  }
}

EtcdCluster::~EtcdCluster() {
  for (pid_t pid : pids_) {
    if (pid > 0) kill(pid, SIGKILL);
  }
  for (pid_t pid : pids_) {
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_ + "/etcd", ec);
}

std::string EtcdCluster::Endpoints(const std::string& host) const {
  std::string out;
  for (uint16_t port : client_ports_) {
    out += (out.empty() ? "" : ",") + std::string(tls_.ca.empty() ? "" : "https://") + host + ":" +
           std::to_string(port);
  }
  return out;
}

std::vector<std::string> EtcdCluster::EtcdctlTls() const {
  if (tls_.ca.empty()) return {};
  return {"--cacert=" + tls_.ca, "--cert=" + tls_.cert, "--key=" + tls_.key};
}

std::vector<std::string> EtcdCluster::Etcdctl(const std::vector<std::string>& args) const {
  const std::string out = dir_ + "/etcd/etcdctl.out";
  std::filesystem::remove(out);
  std::vector<std::string> argv = {kEtcdctl, "--endpoints=" + endpoints(), "--command-timeout=5s"};
  for (const auto& f : EtcdctlTls()) argv.push_back(f);
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = SpawnLogged(argv, out, dir_ + "/etcd/etcdctl.log");
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    return {};
  }
  std::vector<std::string> lines;
  std::ifstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> EtcdCluster::Keys(const std::string& prefix) const {
  return Etcdctl({"get", "--prefix", "--keys-only", prefix});
}

std::string EtcdCluster::Value(const std::string& key) const {
  auto lines = Etcdctl({"get", "--print-value-only", key});
  return lines.empty() ? "" : lines.front();
}

int64_t EtcdCluster::Revision() const {
  // The answer's header: {"header":{"cluster_id":...,"revision":N,...}}.
  auto lines = Etcdctl({"get", "--write-out=json", "--keys-only", "snn-test-revision"});
  const std::string field = "\"revision\":";
  const size_t at = lines.empty() ? std::string::npos : lines.front().find(field);
  if (at == std::string::npos) return -1;
  return std::strtoll(lines.front().c_str() + at + field.size(), nullptr, 10);
}

Status EtcdCluster::Start() {
  if (!Available()) return Unavailable("etcd is not installed (Debian: etcd-server etcd-client)");
  std::filesystem::create_directories(dir_ + "/etcd");
  std::string initial;
  for (size_t i = 0; i < peer_ports_.size(); ++i) {
    initial += (i ? "," : "") + std::string("e") + std::to_string(i) +
               "=http://127.0.0.1:" + std::to_string(peer_ports_[i]);
  }
  for (size_t i = 0; i < client_ports_.size(); ++i) {
    const std::string name = "e" + std::to_string(i);
    const std::string scheme = tls_.ca.empty() ? "http://" : "https://";
    const std::string client = scheme + "127.0.0.1:" + std::to_string(client_ports_[i]);
    std::string listen = client;
    if (!extra_host_.empty()) {
      listen += "," + scheme + extra_host_ + ":" + std::to_string(client_ports_[i]);
    }
    std::vector<std::string> tls_flags;
    if (!tls_.ca.empty()) {
      tls_flags = {"--cert-file=" + tls_.cert, "--key-file=" + tls_.key,
                   "--trusted-ca-file=" + tls_.ca, "--client-cert-auth"};
    }
    const std::string peer = "http://127.0.0.1:" + std::to_string(peer_ports_[i]);
    std::vector<std::string> argv = {
        kEtcd, "--name=" + name, "--data-dir=" + dir_ + "/etcd/" + name,
        "--listen-client-urls=" + listen, "--advertise-client-urls=" + client,
        "--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
        "--initial-cluster=" + initial, "--initial-cluster-state=new",
        "--initial-cluster-token=snn-test-" + std::to_string(getpid()),
        // Raft's own failure detection, faster than the defaults (100 ms / 1 s) on loopback.
        "--heartbeat-interval=50", "--election-timeout=500", "--logger=zap",
        "--log-outputs=stderr"};
    argv.insert(argv.end(), tls_flags.begin(), tls_flags.end());
    const pid_t pid =
        SpawnLogged(argv, dir_ + "/etcd/" + name + ".log", dir_ + "/etcd/" + name + ".log");
    if (pid < 0) return Internal("cannot start " + std::string(kEtcd));
    pids_.push_back(pid);
  }
  const snn::RealDeadline deadline(30000);
  while (!deadline.passed()) {
    std::vector<std::string> put = {kEtcdctl, "--endpoints=" + endpoints(), "--command-timeout=2s"};
    for (const auto& f : EtcdctlTls()) put.push_back(f);
    put.insert(put.end(), {"put", "/snn-test/ready", "1"});
    if (RunQuiet(put, dir_ + "/etcd/etcdctl.log") == 0) {
      return Status::Ok();
    }
    snn::SleepRealMs(100);
  }
  return Unavailable("etcd did not answer within 30 s; see " + dir_ + "/etcd/*.log");
}

}  // namespace snn::testing
