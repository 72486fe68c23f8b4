// The policy file (YAML, see etc/policy.yaml): read at the master's first start into a
// v1::SchedulingConfig over the defaults, and validated. Errors name the file and the field.
// Pure apart from reading the file; thread-safe.
#pragma once

#include <string>

#include "common/base/status.h"
#include "proto/policy.pb.h"

namespace snn {

Result<v1::SchedulingConfig> LoadPolicyFile(const std::string& path);
Result<v1::SchedulingConfig> ParsePolicyYaml(const std::string& text);

}  // namespace snn
