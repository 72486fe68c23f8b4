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

const char* DependencyName(DependencyKind kind) {
  switch (kind) {
    case DependencyKind::kAfterOk:
      return "after_ok";
    case DependencyKind::kAfterAny:
      return "after_any";
    case DependencyKind::kAfterNotOk:
      return "after_not_ok";
  }
  return "?";
}

const char* DependencyAwaits(DependencyKind kind) {
  switch (kind) {
    case DependencyKind::kAfterOk:
      return "complete";
    case DependencyKind::kAfterAny:
      return "end";
    case DependencyKind::kAfterNotOk:
      return "end other than COMPLETED";
  }
  return "?";
}

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
