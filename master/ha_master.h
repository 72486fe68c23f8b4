// Runs a master as one of an --ha_etcd group: it stands by (following the log, redirecting
// clients to the leader), campaigns, and serves once it leads. Returns the process exit code.
#pragma once

#include <memory>
#include <string>

#include "master/ha/etcd_client.h"
#include "master/ha/ha_member.h"
#include "master/master_server.h"

namespace snn {

struct HaMasterOptions {
  std::string etcd_endpoints;  // "a:2379,b:2379,c:2379" (or https://a:2379,...)
  EtcdTlsFiles etcd_tls;
  HaOptions member;
  size_t max_in_flight = 1;  // HaStore::max_in_flight
};

int RunHaMaster(MasterConfig config, std::unique_ptr<Store> local, HaMasterOptions options);

}  // namespace snn
