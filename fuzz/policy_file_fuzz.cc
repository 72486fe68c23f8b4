// Policy files as admins write them: a policy that passes ValidatePolicy, or one clear error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "master/policy/policy_file.h"
#include "master/sched/policy_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto policy = snn::ParsePolicyYaml(std::string(reinterpret_cast<const char*>(data), size));
  if (policy.ok()) (void)snn::ValidatePolicy(*policy);
  return 0;
}
