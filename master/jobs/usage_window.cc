#include "master/jobs/usage_window.h"

#include <algorithm>

namespace snn {

bool UsageWindow::Configure(const v1::SchedulingConfig& config) {
  auto window = [](const v1::UsageLimits& l) {
    return l.max_core_hours() > 0 ? static_cast<int64_t>(l.window_s()) * 1000 : 0;
  };
  user_window_ms_ = window(config.user_limits());
  tenant_windows_.clear();
  int64_t horizon = user_window_ms_;
  for (const v1::TenantConfig& t : config.tenants()) {
    if (const int64_t w = window(t.limits()); w > 0) {
      tenant_windows_[t.name()] = w;
      horizon = std::max(horizon, w);
    }
  }
  const bool grew = horizon > horizon_ms_;
  horizon_ms_ = horizon;
  if (horizon_ms_ == 0) {
    users_.clear();
    tenants_.clear();
  }
  return grew;
}

Status UsageWindow::Load(const BillingLedger& ledger, int64_t now_ms) {
  users_.clear();
  tenants_.clear();
  if (horizon_ms_ == 0) return Status::Ok();
  auto tenants = ledger.UsageTenants();
  if (!tenants.ok()) return tenants.status();
  for (const std::string& tenant : *tenants) {
    SNN_RETURN_IF_ERROR(ledger.ScanUsage(tenant, now_ms - horizon_ms_, [this](auto& record) {
      Add(record);
      return true;
    }));
  }
  return Status::Ok();
}

void UsageWindow::Add(const v1::UsageRecord& r) {
  if (horizon_ms_ == 0 || r.kind() == "step" || r.end_ms() <= r.start_ms()) return;
  // As the report weighs it: an experiment is its user's board time spread over when it ran;
  // a service, the time its users did not use.
  const double span = static_cast<double>(r.end_ms() - r.start_ms());
  const double busy = static_cast<double>(r.busy_us()) / 1000;
  double weight = 1;
  if (r.kind() == "experiment") weight = std::min(1.0, busy / span);
  if (r.kind() == "service") weight = std::max(0.0, 1 - busy / span);
  const Use use{r.start_ms(), r.end_ms(), weight * r.cores()};
  users_[r.user()].push_back(use);
  tenants_[r.tenant()].push_back(use);
}

double UsageWindow::Sum(const std::deque<Use>& uses, int64_t from_ms) const {
  double sum = 0;
  for (const Use& u : uses) {
    sum += u.cores *
           static_cast<double>(std::max<int64_t>(0, u.end_ms - std::max(u.start_ms, from_ms)));
  }
  return sum;
}

std::shared_ptr<const EndedCoreTime> UsageWindow::Ended(int64_t now_ms) {
  if (horizon_ms_ == 0) return nullptr;
  auto trim = [cutoff = now_ms - horizon_ms_](std::map<std::string, std::deque<Use>>& all) {
    for (auto it = all.begin(); it != all.end();) {
      while (!it->second.empty() && it->second.front().end_ms < cutoff) it->second.pop_front();
      it = it->second.empty() ? all.erase(it) : std::next(it);
    }
  };
  trim(users_);
  trim(tenants_);
  auto ended = std::make_shared<EndedCoreTime>();
  if (user_window_ms_ > 0) {
    for (const auto& [user, uses] : users_) {
      ended->users[user] = Sum(uses, now_ms - user_window_ms_);
    }
  }
  for (const auto& [tenant, window] : tenant_windows_) {
    if (auto it = tenants_.find(tenant); it != tenants_.end()) {
      ended->tenants[tenant] = Sum(it->second, now_ms - window);
    }
  }
  return ended;
}

}  // namespace snn
