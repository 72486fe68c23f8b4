// UTF-8 checks for text that reaches protobuf string fields: snnctl's arguments and files.
// Pure, thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace snn {

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF); if not, `bad_at` is the offset of the first bad byte.
bool ValidUtf8(const std::string& text, size_t& bad_at);

}  // namespace snn
