#include "master/ha_master.h"

#include <glog/logging.h>
#include <unistd.h>

#include <thread>

#include "common/base/clock.h"

namespace snn {

namespace {

// A master that can no longer lead must not act as one: it ends, and its supervisor starts it
// again as a standby that follows the new leader's log.
[[noreturn]] void EndProcess(const std::string& why) {
  LOG(ERROR) << why << "; snn-master exits so that it cannot act as leader";
  google::FlushLogFiles(google::GLOG_INFO);
  _exit(3);
}

}  // namespace

int RunHaMaster(MasterConfig config, std::unique_ptr<Store> local, HaMasterOptions options) {
  auto endpoints = ParseEtcdEndpoints(options.etcd_endpoints);
  if (!endpoints.ok()) {
    LOG(ERROR) << "--ha_etcd: " << endpoints.status().message();
    return 2;
  }
  auto credentials = EtcdCredentials(*endpoints, options.etcd_tls);
  if (!credentials.ok()) {
    LOG(ERROR) << "--ha_etcd: " << credentials.status().message();
    return 2;
  }
  SystemClock clock;
  EtcdClient etcd(endpoints->hosts, /*timeout_ms=*/2000, clock, *credentials);
  HaMember* member_ptr = nullptr;
  auto store = std::make_unique<HaStore>(
      std::move(local), etcd, clock, options.member.prefix,
      [&member_ptr] { return member_ptr != nullptr && member_ptr->LeaseValid(); }, EndProcess);
  HaStore& ha_store = *store;
  ha_store.max_in_flight = options.max_in_flight;
  HaMember member(etcd, ha_store, clock, options.member, EndProcess);
  member_ptr = &member;
  if (auto s = member.Start(); !s.ok()) {
    LOG(ERROR) << "cannot join the HA group in etcd at " << options.etcd_endpoints << ": "
               << s.message();
    return 1;
  }
  config.standby_leader = [&member] { return member.leader_address(); };
  MasterServer master(config, clock, std::move(store));
  if (auto s = master.Start(); !s.ok()) {
    LOG(ERROR) << s.message();
    member.Stop();
    return 1;
  }
  if (options.member.advertise.empty()) {  // --listen's host, with the port bound
    member.set_advertise(config.listen.host + ":" + std::to_string(master.port()));
  }
  std::thread campaign([&] {
    Status s = member.Campaign();
    if (s.ok()) {
      master.Promote();
    } else if (!member.stopping()) {
      EndProcess("ha: campaigning failed: " + s.message());
    }
  });
  master.Run();   // until SIGTERM; the store is closed when it returns
  member.Stop();  // resigns: a standby takes over at once
  campaign.join();
  LOG(INFO) << "snn-master stopped";
  return 0;
}

}  // namespace snn
