// Boards files as operators write them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/daemon/board_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)snn::ParseBoardsYaml(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
