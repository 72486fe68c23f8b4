// Base64 (RFC 4648, the standard alphabet with '=' padding), for binary content carried in text:
// a job file's `files:` given as {base64: ...}. Strict: anything but the alphabet, padding at the
// end and line breaks is refused, so a damaged file is never taken for another.
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace snn {

// The bytes `text` encodes, or nullopt when it is not base64. Line breaks are skipped.
std::optional<std::string> DecodeBase64(std::string_view text);

std::string EncodeBase64(std::string_view bytes);

}  // namespace snn
