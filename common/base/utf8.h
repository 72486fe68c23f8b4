// UTF-8 checks for text that reaches protobuf string fields: snnctl's arguments and files.
// Pure, thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace snn {

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF); if not, `bad_at` is the offset of the first bad byte.
bool ValidUtf8(const std::string& text, size_t& bad_at);

// Text as YAML allows it (YAML 1.2, 5.2): UTF-8 with or without a byte order mark, or UTF-16
// (little or big endian) with one; returns UTF-8 without the mark. The error says what is wrong
// (UTF-32, an unpaired surrogate, an odd length) in one line.
struct TextOrError {
  std::string text;
  std::string error;  // empty: `text` holds it
};
TextOrError DecodeUnicodeText(const std::string& bytes);

}  // namespace snn
