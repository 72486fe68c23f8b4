// A master and one agent for load generators run by hand: temp dir, ephemeral port, their own
// munged and CA (--auth=munge) or none; stopped (and the dir removed) on destruction.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/rpc/address.h"
#include "common/rpc/rpc_client.h"
#include "tests/test_util/auth_kit.h"
#include "tests/test_util/etcd_cluster.h"

namespace snn::bench {

class BenchCluster {
 public:
  BenchCluster() = default;
  ~BenchCluster();

  // Starts both and waits until the agent is UP; `auth` is "munge" or "none". With
  // `etcd_members` > 0, an etcd cluster of that many members first, and the master in its HA
  // mode (--ha_etcd) on it: the group's leader, writing every batch to etcd.
  Status Start(const std::string& auth, const std::vector<std::string>& master_flags = {},
               int etcd_members = 0);
  // A client as snnctl makes one (TLS and MUNGE, or the claimed user "bench").
  void SetUp(RpcClient& client) const;

  const HostPort& master() const { return master_; }
  pid_t master_pid() const { return master_pid_; }
  const std::string& dir() const { return dir_; }
  testing::AuthKit* auth() const { return auth_.get(); }
  // The etcd cluster of the HA mode; null for a single master.
  const testing::EtcdCluster* etcd() const { return etcd_.get(); }

 private:
  std::string dir_;
  HostPort master_;
  pid_t master_pid_ = -1;
  pid_t agent_pid_ = -1;
  std::unique_ptr<testing::AuthKit> auth_;
  std::unique_ptr<testing::EtcdCluster> etcd_;
};

}  // namespace snn::bench
