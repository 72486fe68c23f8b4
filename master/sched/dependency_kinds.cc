#include "master/sched/dependency_kinds.h"

namespace snn {

std::vector<Dependency> DependenciesOf(const v1::JobSpec& spec) {
  std::vector<Dependency> out;
  for (uint64_t id : spec.after_ok()) out.push_back({id, DependencyKind::kAfterOk});
  for (uint64_t id : spec.after_any()) out.push_back({id, DependencyKind::kAfterAny});
  for (uint64_t id : spec.after_not_ok()) out.push_back({id, DependencyKind::kAfterNotOk});
  return out;
}

std::optional<DependencyKind> DependencyOn(const v1::JobSpec& spec, uint64_t job) {
  for (const Dependency& d : DependenciesOf(spec)) {
    if (d.job == job) return d.kind;
  }
  return std::nullopt;
}

namespace {

struct KindWords {
  const char* name;    // as the job file names it
  const char* awaits;  // what the awaited job must do
};
// By DependencyKind.
constexpr KindWords kWords[] = {
    {"after_ok", "complete"}, {"after_any", "end"}, {"after_not_ok", "end other than COMPLETED"}};

}  // namespace

const char* DependencyName(DependencyKind kind) { return kWords[static_cast<int>(kind)].name; }

const char* DependencyAwaits(DependencyKind kind) { return kWords[static_cast<int>(kind)].awaits; }

bool DependencyMetBy(DependencyKind kind, v1::JobState state) {
  switch (kind) {
    case DependencyKind::kAfterOk:
      return state == v1::COMPLETED;
    case DependencyKind::kAfterAny:
      return true;
    case DependencyKind::kAfterNotOk:
      return state != v1::COMPLETED;
  }
  return false;
}

}  // namespace snn
