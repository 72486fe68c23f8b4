#include "common/base/utf8.h"

#include <cstdint>

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

namespace {

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

TextOrError DecodeUnicodeText(const std::string& bytes) {
  auto starts = [&](const char* mark, size_t n) { return bytes.compare(0, n, mark, n) == 0; };
  if (starts("\xEF\xBB\xBF", 3)) return {bytes.substr(3), ""};
  if (starts("\x00\x00\xFE\xFF", 4) || starts("\xFF\xFE\x00\x00", 4)) {
    return {"", "is UTF-32 text; save it as UTF-8"};
  }
  const bool little = starts("\xFF\xFE", 2);
  if (!little && !starts("\xFE\xFF", 2)) return {bytes, ""};
  if (bytes.size() % 2 != 0) return {"", "is UTF-16 text of an odd length (cut short?)"};
  std::string out;
  out.reserve(bytes.size());
  auto unit = [&](size_t at) -> uint32_t {
    const auto b0 = static_cast<unsigned char>(bytes[at]);
    const auto b1 = static_cast<unsigned char>(bytes[at + 1]);
    return little ? (b1 << 8 | b0) : (b0 << 8 | b1);
  };
  for (size_t at = 2; at < bytes.size(); at += 2) {
    uint32_t cp = unit(at);
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (at + 3 >= bytes.size() || unit(at + 2) < 0xDC00 || unit(at + 2) > 0xDFFF) {
        return {"", "is UTF-16 text with an unpaired surrogate (byte " + std::to_string(at) + ")"};
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (unit(at + 2) - 0xDC00);
      at += 2;
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
      return {"", "is UTF-16 text with an unpaired surrogate (byte " + std::to_string(at) + ")"};
    }
    AppendUtf8(cp, out);
  }
  return {out, ""};
}

}  // namespace snn
