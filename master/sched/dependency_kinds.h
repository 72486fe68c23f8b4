// The kinds of dependency between a tenant's jobs (JobSpec.after_ok, after_any, after_not_ok):
// which ending meets each, and the words a waiting or cancelled job gives. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "proto/job.pb.h"

namespace snn {

enum class DependencyKind : uint8_t { kAfterOk, kAfterAny, kAfterNotOk };

struct Dependency {
  uint64_t job = 0;  // the tenant's job ID
  DependencyKind kind = DependencyKind::kAfterOk;
};

// Every dependency of a job, after_ok first, then after_any, then after_not_ok.
std::vector<Dependency> DependenciesOf(const v1::JobSpec& spec);
// How `spec` depends on its tenant's job `job` (none: it does not).
std::optional<DependencyKind> DependencyOn(const v1::JobSpec& spec, uint64_t job);
// "after_ok", "after_any", "after_not_ok".
const char* DependencyName(DependencyKind kind);
// What the awaited job must do: "complete", "end", "end other than COMPLETED".
const char* DependencyAwaits(DependencyKind kind);
// Whether a job that ended in `state` meets the dependency.
bool DependencyMetBy(DependencyKind kind, v1::JobState state);

}  // namespace snn
