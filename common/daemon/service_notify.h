// systemd's service protocol for the daemons (sd_notify): READY=1 once serving, STATUS= lines,
// RELOADING=1 around a reload, STOPPING=1, and watchdog pings from the daemon's own event loop,
// so that a loop that wedges stops feeding the watchdog and systemd restarts the daemon
// (WatchdogSec= in the unit). Without NOTIFY_SOCKET in the environment every call does nothing.
// Thread contract: Start, Ready, Status on the io thread; the pings run there too.
#pragma once

#include <cstdint>
#include <string>

#include "common/rpc/asio.h"

namespace snn {

class ServiceNotifier {
 public:
  explicit ServiceNotifier(asio::io_context& io);

  // Starts the watchdog pings if the service manager asked for them (WATCHDOG_USEC, for this
  // process): every half of the interval, from a timer on `io`.
  void Start();
  void Ready(const std::string& status);
  void Status(const std::string& status);
  void Reloading();
  void Stopping();
  void Cancel() { timer_.cancel(); }
  int64_t watchdog_interval_us() const { return interval_us_; }

 private:
  void Ping();

  asio::steady_timer timer_;
  int64_t interval_us_ = 0;
};

}  // namespace snn
