#include "common/base/utf8.h"

namespace snn {

bool ValidUtf8(const std::string& text, size_t& bad_at) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > n || (len == 2 && c < 0xc2)) {
      bad_at = i;
      return false;
    }
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] >> 6) != 2) {
        bad_at = i;
        return false;
      }
    }
    i += len;
  }
  return true;
}

}  // namespace snn
