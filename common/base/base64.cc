#include "common/base/base64.h"

#include <array>
#include <cstdint>

namespace snn {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> Table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  return t;
}

}  // namespace

std::optional<std::string> DecodeBase64(std::string_view text) {
  static constexpr std::array<int8_t, 256> kTable = Table();
  std::string digits;
  digits.reserve(text.size());
  for (char c : text) {
    if (c != '\n' && c != '\r') digits.push_back(c);
  }
  if (digits.size() % 4 != 0) return std::nullopt;
  size_t pad = 0;
  while (pad < 2 && !digits.empty() && digits[digits.size() - 1 - pad] == '=') ++pad;
  std::string out;
  out.reserve(digits.size() / 4 * 3);
  uint32_t acc = 0;
  for (size_t i = 0; i < digits.size() - pad; ++i) {
    const int8_t v = kTable[static_cast<unsigned char>(digits[i])];
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    if (i % 4 == 3) {
      out.push_back(static_cast<char>(acc >> 16));
      out.push_back(static_cast<char>(acc >> 8));
      out.push_back(static_cast<char>(acc));
      acc = 0;
    }
  }
  if (pad == 1) {  // 3 digits: 2 bytes, the last 2 bits zero
    if (acc & 0x3) return std::nullopt;
    out.push_back(static_cast<char>(acc >> 10));
    out.push_back(static_cast<char>(acc >> 2));
  } else if (pad == 2) {  // 2 digits: 1 byte, the last 4 bits zero
    if (acc & 0xf) return std::nullopt;
    out.push_back(static_cast<char>(acc >> 4));
  }
  return out;
}

std::string EncodeBase64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

}  // namespace snn
