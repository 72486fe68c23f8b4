// Strict readers for YAML configuration and job files: every error names the field at fault.
// Used by snnctl's job files and the agent's boards file. Pure; thread-safe.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "common/base/status.h"

namespace snn {

// Parses `bytes` as exactly one YAML document: UTF-8 (or UTF-16 with a byte order mark, as YAML
// allows), at most 32 levels deep, no mapping with a key twice, at most a million values with
// its aliases expanded. `what` names the file in errors ("the job file"). YAML errors are
// returned, not thrown.
Result<YAML::Node> LoadYamlDocument(const std::string& bytes, const std::string& what);

// `node` must be a mapping whose keys are all in `known`.
Status CheckKnownFields(const YAML::Node& node, const std::string& where,
                        const std::set<std::string>& known);

// A whole number in [lo, hi].
Result<int64_t> ReadWholeNumber(const YAML::Node& node, const std::string& where, int64_t lo,
                                int64_t hi);

// A number (decimals allowed) in [lo, hi].
Result<double> ReadNumber(const YAML::Node& node, const std::string& where, double lo, double hi);

// A scalar, as a string.
Result<std::string> ReadString(const YAML::Node& node, const std::string& where);

// {NAME: N, ...} with names of letters, digits, '-', '_' and '.' (1 to 64) and each N a whole
// number in [1, hi]; at most `max_entries` of them. Licenses, in the policy and in job files.
Result<std::map<std::string, uint32_t>> ReadCountMap(const YAML::Node& node,
                                                     const std::string& where, uint32_t hi,
                                                     size_t max_entries);

}  // namespace snn
