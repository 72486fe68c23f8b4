// Job files as users write them: a job or one line naming the field and the rule.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/base/job_validation.h"
#include "common/daemon/job_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto spec = snn::ParseJobYaml(text, "fuzz");
  if (spec.ok() && spec->task().resources().model().empty() && !snn::ValidateJobSpec(*spec).ok()) {
    __builtin_trap();  // a job file that parses is a valid job
  }
  return 0;
}
