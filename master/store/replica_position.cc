#include "master/store/replica_position.h"

#include <charconv>
#include <string>

namespace snn {

Result<uint64_t> ReadAppliedSeq(Store& store) {
  auto value = store.Get(kAppliedSeqKey);
  if (!value.ok()) return value.status();
  if (!*value) return uint64_t{0};
  const std::string& text = **value;
  uint64_t seq = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seq, 16);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return Internal("corrupt " + std::string(kAppliedSeqKey) + " record '" + text + "'");
  }
  return seq;
}

}  // namespace snn
