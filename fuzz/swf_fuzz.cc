// Standard Workload Format traces as archives publish them (decimals, comments, odd lines),
// read strictly and leniently.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/swf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)snn::ParseSwf(text, false);
  (void)snn::ParseSwf(text, true);
  return 0;
}
