#include "tests/test_util/auth_kit.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "common/base/clock.h"
#include "common/base/file_util.h"
#include "common/daemon/board_config.h"
#include "common/identity/munge.h"
#include "common/identity/pki.h"
#include "common/rpc/tls.h"
#include "tests/test_util/process.h"

namespace snn::testing {
namespace {

Status WritePair(const std::string& dir, const std::string& name, const pki::KeyAndCert& pair) {
  SNN_RETURN_IF_ERROR(WriteFileAtomic(dir + "/" + name + ".key", pair.key_pem, 0600));
  return WriteFileAtomic(dir + "/" + name + ".crt", pair.cert_pem, 0644);
}

}  // namespace

Status AuthKit::IssueMaster() {
  auto master = pki::IssueWithNewKey(ca_, {"snn-master", pki::kRoleMaster, 86400, master_hosts_});
  if (!master.ok()) return master.status();
  return WritePair(tls_dir(), "master", *master);
}

Status AuthKit::ApproveNode(const HostPort& master, const std::string& node,
                            const std::string& boards_yaml) const {
  auto req = NodeAddRequestFor(node, boards_yaml);
  if (!req.ok()) return req.status();
  RpcClient admin(std::chrono::milliseconds(5000));
  SetUp(admin);
  SNN_RETURN_IF_ERROR(admin.Connect(master));
  return admin.Call(rpc::kNodeAdd, *req).status();
}

Result<v1::NodeAddRequest> AuthKit::NodeAddRequestFor(const std::string& node,
                                                      const std::string& boards_yaml) {
  auto boards = ParseBoardsYaml(boards_yaml);
  if (!boards.ok()) return boards.status();
  v1::NodeAddRequest req;
  req.set_node(node);
  for (const auto& b : boards->boards) *req.add_boards() = b;
  return req;
}

Status AuthKit::NameMasterHost(const std::string& host) {
  if (std::find(master_hosts_.begin(), master_hosts_.end(), host) != master_hosts_.end()) {
    return Status::Ok();
  }
  master_hosts_.push_back(host);
  return IssueMaster();
}

AuthKit::AuthKit(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_ + "/munge", ec);
  std::filesystem::create_directories(tls_dir(), ec);
  // Other users (AsUser) reach the socket and the CA certificate through these.
  ::chmod(dir_.c_str(), 0755);
  ::chmod((dir_ + "/munge").c_str(), 0755);
  ::chmod(tls_dir().c_str(), 0755);
  std::string key(1024, '\0');
  std::random_device random;
  for (auto& c : key) c = static_cast<char>(random());
  status_ = WriteFileAtomic(dir_ + "/munge/munge.key", key, 0600);
  if (!status_.ok()) return;
  auto ca = pki::NewCa("snn test CA", 86400);
  if (!ca.ok()) {
    status_ = ca.status();
    return;
  }
  ca_ = *ca;
  status_ = WritePair(tls_dir(), "ca", ca_);
  if (status_.ok()) status_ = IssueMaster();
  if (!status_.ok()) return;
  const std::string m = dir_ + "/munge/";
  munged_ = SpawnLogged(
      {"/usr/sbin/munged", "--foreground", "--force", "--socket=" + m + "socket",
       "--key-file=" + m + "munge.key", "--pid-file=" + m + "munged.pid",
       "--seed-file=" + m + "munged.seed", "--log-file=" + m + "munged.log", "--num-threads=4"},
      m + "munged.out", m + "munged.out");
  if (munged_ <= 0) {
    status_ = Unavailable("cannot start /usr/sbin/munged (is the munge package installed?)");
    return;
  }
  for (int i = 0; i < 500; ++i) {  // munged is ready once it answers
    if (MungeEncode(munge_socket()).ok()) return;
    snn::SleepRealMs(10);
  }
  status_ = Unavailable("munged did not answer on " + munge_socket());
}

AuthKit::~AuthKit() {
  if (munged_ > 0) {
    ::kill(munged_, SIGTERM);
    ::waitpid(munged_, nullptr, 0);
  }
}

std::vector<std::string> AuthKit::MasterFlags() const {
  return {"--auth=munge", "--tls_dir=" + tls_dir(), "--munge_socket=" + munge_socket()};
}

std::vector<std::string> AuthKit::AgentFlags(const std::string& node) {
  const std::string dir = dir_ + "/" + node + ".tls";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto key = ReadWholeFile(tls_dir() + "/ca.key", "CA key");
  auto cert = ReadWholeFile(ca_file(), "CA certificate");
  if (key.ok() && cert.ok()) {
    pki::KeyAndCert ca{*key, *cert};
    auto issued = pki::IssueWithNewKey(ca, {node, pki::kRoleNode, 86400, {}});
    if (issued.ok()) {
      status_ = WriteFileAtomic(dir + "/node.pem", issued->cert_pem + issued->key_pem, 0600);
      if (status_.ok()) status_ = WriteFileAtomic(dir + "/ca.crt", *cert, 0644);
    } else {
      status_ = issued.status();
    }
  }
  return {"--tls_dir=" + dir};
}

std::vector<std::string> AuthKit::SnnctlFlags() const {
  return {"--ca-file", ca_file(), "--munge-socket", munge_socket()};
}

void AuthKit::SetUp(RpcClient& client) const {
  auto tls = MakeClientTls({ca_file(), "", ""});
  if (tls.ok()) client.set_tls(*tls);
  client.set_minter([socket = munge_socket()] { return MungeEncode(socket); });
}

std::vector<std::string> AuthKit::AsUser(const std::string& user,
                                         const std::vector<std::string>& argv) {
  const passwd* pw = getpwnam(user.c_str());
  const std::string gid = pw != nullptr ? std::to_string(pw->pw_gid) : user;
  std::vector<std::string> full = {"/usr/bin/setpriv", "--reuid=" + user, "--regid=" + gid,
                                   "--init-groups", "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

}  // namespace snn::testing
