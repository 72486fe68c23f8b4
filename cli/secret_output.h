// Secrets snnctl prints (access tokens, join tokens) kept from other local users.
#pragma once

#include <ostream>
#include <string>

#include "common/base/status.h"

namespace snn {

// Writes `text` to `path` readable by its owner only: a new file of mode 0600 beside it, then
// renamed over it (an older, wider file of that name is replaced, not reused).
Status WritePrivateFile(const std::string& path, const std::string& text);

// `snnctl ... > FILE`: the shell made FILE with its umask (often 0644). A secret in a file others
// can read is anyone's, so such a file of ours is narrowed to 0600, saying so on `err`.
void NarrowRedirectedOutput(std::ostream& err);

}  // namespace snn
