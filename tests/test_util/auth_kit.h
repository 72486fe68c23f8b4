// A cluster's secrets for tests, benchmarks and tools that start real daemons: a MUNGE key with
// its own munged (foreground, on a socket in `dir`), the cluster's CA, the master's certificate,
// and node certificates on demand. Clients made through it speak TLS and carry MUNGE credentials
// of the calling process's uid; `AsUser` runs a program as another Unix user (root only).
// Not thread-safe; one per cluster. The destructor stops munged.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/base/status.h"
#include "common/identity/pki.h"
#include "common/rpc/rpc_client.h"

namespace snn::testing {

class AuthKit {
 public:
  // Creates `dir` (made traversable for other users) and starts munged there.
  explicit AuthKit(std::string dir);
  ~AuthKit();
  AuthKit(const AuthKit&) = delete;
  AuthKit& operator=(const AuthKit&) = delete;

  const Status& status() const { return status_; }
  std::string tls_dir() const { return dir_ + "/tls"; }
  std::string ca_file() const { return tls_dir() + "/ca.crt"; }
  std::string munge_socket() const { return dir_ + "/munge/socket"; }

  std::vector<std::string> MasterFlags() const;
  // The master's certificate names 127.0.0.1 and localhost, as clients check; a master reached
  // at another address (in a network namespace, an HA member's advertised host) needs it named
  // before it starts: the certificate is issued again with it.
  Status NameMasterHost(const std::string& host);
  // Issues node `node` a certificate (in its own directory with ca.crt) and returns the flags.
  std::vector<std::string> AgentFlags(const std::string& node);
  // As an admin approves a node before it first registers (snnctl node add NODE --boards FILE):
  // what `boards_yaml` (a boards file) declares, at the master at `master`.
  Status ApproveNode(const HostPort& master, const std::string& node,
                     const std::string& boards_yaml) const;
  static Result<v1::NodeAddRequest> NodeAddRequestFor(const std::string& node,
                                                      const std::string& boards_yaml);
  // For snnctl: --ca-file and --munge-socket.
  std::vector<std::string> SnnctlFlags() const;
  // TLS to the master and a MUNGE credential on every request.
  void SetUp(RpcClient& client) const;

  // A command line that runs `argv` as Unix user `user` (its uid, gid and groups).
  static std::vector<std::string> AsUser(const std::string& user,
                                         const std::vector<std::string>& argv);

 private:
  Status IssueMaster();

  std::string dir_;
  Status status_;
  pki::KeyAndCert ca_;
  std::vector<std::string> master_hosts_ = {"127.0.0.1", "localhost"};
  pid_t munged_ = -1;
};

}  // namespace snn::testing
