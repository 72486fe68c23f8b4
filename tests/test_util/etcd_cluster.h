// A real etcd cluster for tests and benchmarks of the master's --ha_etcd mode: N members of
// Debian's etcd-server on 127.0.0.1 (free ports picked at start, data in a temp dir), each
// listening also on `extra_host` when given (a veth address, for partition tests), and with
// TLS for clients when given certificate files (clients must then present one signed by the
// same CA). The destructor kills every member and removes the dir. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/base/status.h"

namespace snn::testing {

class EtcdCluster {
 public:
  struct Tls {
    std::string ca, cert, key;  // PEM files; the certificate names 127.0.0.1
  };
  // `dir`: created if missing; each member's data and log go under it.
  EtcdCluster(std::string dir, int members = 3, std::string extra_host = "", Tls tls = {});
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  // Starts every member and waits until the cluster answers (a key written and read back).
  Status Start();
  // "127.0.0.1:P1,127.0.0.1:P2,..." (https://... with TLS): the value of --ha_etcd.
  std::string endpoints() const { return Endpoints("127.0.0.1"); }
  // The same members reached at `extra_host`.
  std::string extra_endpoints() const { return Endpoints(extra_host_); }

  // The keys under `prefix` now (etcdctl get --prefix --keys-only); empty on any error.
  std::vector<std::string> Keys(const std::string& prefix) const;
  // The value of `key` ("" when absent or on any error).
  std::string Value(const std::string& key) const;
  // The cluster's revision now: one more for every write transaction (-1 on any error).
  int64_t Revision() const;
  // The members' process ids.
  const std::vector<pid_t>& pids() const { return pids_; }

  static bool Available();  // whether the etcd binary is installed

 private:
  std::string Endpoints(const std::string& host) const;
  std::vector<std::string> EtcdctlTls() const;  // etcdctl's flags for TLS (none without)
  // etcdctl's output lines; empty on any error.
  std::vector<std::string> Etcdctl(const std::vector<std::string>& args) const;

  std::string dir_;
  std::string extra_host_;
  Tls tls_;
  std::vector<uint16_t> client_ports_, peer_ports_;
  std::vector<pid_t> pids_;
};

// A TCP port on 127.0.0.1 that nothing listens on right now.
uint16_t FreeLoopbackPort();

}  // namespace snn::testing
