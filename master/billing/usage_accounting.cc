#include "master/billing/usage_accounting.h"

#include <array>

namespace snn {
namespace {

using Getter = uint64_t (v1::SpikeUsage::*)() const;
using Setter = void (v1::SpikeUsage::*)(uint64_t);
struct Field {
  Getter get;
  Setter set;
};
constexpr std::array<Field, 7> kFields{{
    {&v1::SpikeUsage::injected, &v1::SpikeUsage::set_injected},
    {&v1::SpikeUsage::delivered, &v1::SpikeUsage::set_delivered},
    {&v1::SpikeUsage::delayed, &v1::SpikeUsage::set_delayed},
    {&v1::SpikeUsage::dropped, &v1::SpikeUsage::set_dropped},
    {&v1::SpikeUsage::throttled, &v1::SpikeUsage::set_throttled},
    {&v1::SpikeUsage::refused, &v1::SpikeUsage::set_refused},
    {&v1::SpikeUsage::outputs, &v1::SpikeUsage::set_outputs},
}};

}  // namespace

bool AddTaskUsage(v1::JobRecord& job, v1::TaskRecord& task, const v1::SpikeUsage& reported) {
  const v1::SpikeUsage& last = task.usage_reported();
  // Counters that went back mean a new count (a restarted agent): all of it is new.
  bool restarted = false;
  for (const Field& f : kFields) restarted |= (reported.*f.get)() < (last.*f.get)();
  bool changed = reported.rate_ksps() != task.usage().rate_ksps();
  for (const Field& f : kFields) {
    const uint64_t added = (reported.*f.get)() - (restarted ? 0 : (last.*f.get)());
    if (added == 0) continue;
    changed = true;
    (task.mutable_usage()->*f.set)((task.usage().*f.get)() + added);
    (job.mutable_usage()->*f.set)((job.usage().*f.get)() + added);
  }
  if (!changed) return false;
  *task.mutable_usage_reported() = reported;
  task.mutable_usage()->set_rate_ksps(reported.rate_ksps());
  double rate = 0;
  for (const auto& t : job.tasks()) rate += t.usage().rate_ksps();
  job.mutable_usage()->set_rate_ksps(rate);
  return true;
}

}  // namespace snn
