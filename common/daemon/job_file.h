// Reads a job file (YAML, documented in docs/reference/job-file.md) into a JobSpec, strictly:
// unknown fields, missing required fields and values of the wrong kind are errors naming the field.
// Pure apart from reading the file; thread-safe.
#pragma once

#include <string>

#include "common/base/status.h"
#include "proto/job.pb.h"

namespace snn {

Result<v1::JobSpec> LoadJobFile(const std::string& path);
// `default_name` is used when the file sets no name.
Result<v1::JobSpec> ParseJobYaml(const std::string& text, const std::string& default_name);

}  // namespace snn
