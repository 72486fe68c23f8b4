#include "common/daemon/service_notify.h"

#include <systemd/sd-daemon.h>

#include <chrono>

namespace snn {

ServiceNotifier::ServiceNotifier(asio::io_context& io) : timer_(io) {}

void ServiceNotifier::Start() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(/*unset_environment=*/0, &usec) <= 0 || usec == 0) return;
  interval_us_ = static_cast<int64_t>(usec);
  Ping();
}

void ServiceNotifier::Ping() {
  sd_notify(0, "WATCHDOG=1");
  timer_.expires_after(std::chrono::microseconds(interval_us_ / 2));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) Ping();
  });
}

void ServiceNotifier::Ready(const std::string& status) {
  sd_notify(0, ("READY=1\nSTATUS=" + status).c_str());
}

void ServiceNotifier::Status(const std::string& status) {
  sd_notify(0, ("STATUS=" + status).c_str());
}

void ServiceNotifier::Reloading() { sd_notify(0, "RELOADING=1"); }

void ServiceNotifier::Stopping() { sd_notify(0, "STOPPING=1"); }

}  // namespace snn
